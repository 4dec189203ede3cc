package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/logcapture"
)

// A disruption carried out is one INFO line that names the node, its pool and claim, the
// reason, where the node goes, why, and the pods it moves.
func TestADisruptionIsLoggedAtInfoWithItsReasonAndAction(t *testing.T) {
	log, lines := logcapture.New(t, 0)
	cand := nodeWith(workload("a"), workload("b"), daemonPod)
	cand.node.Name = "node-1"
	logDecision(log, "web", cand, decision{reason: v1beta1.DisruptionUnderutilized, giveBack: true, why: "Its 2 pods fit on the other nodes; giving it back to the warm pool"}, outcomeStandby)
	want := map[string]any{
		"msg": "Disrupting node", "level": float64(0), "nodepool": "web", "node": "node-1", "nodeclaim": "c1",
		"reason": "Underutilized", "action": "standby", "why": "Its 2 pods fit on the other nodes; giving it back to the warm pool",
		"pods": float64(2), "podNames": "default/a, default/b",
	}
	if len(*lines) != 1 {
		t.Fatalf("%d lines, want 1: %v", len(*lines), *lines)
	}
	for k, v := range want {
		if got := (*lines)[0][k]; got != v {
			t.Errorf("%s = %v, want %v (line %v)", k, got, v, (*lines)[0])
		}
	}
}

// A stale node's replacement is one INFO line naming the replacements.
func TestAReplacementIsLoggedAtInfoWithTheClaimsReplacingIt(t *testing.T) {
	log, lines := logcapture.New(t, 0)
	cand := nodeWith(workload("a"))
	cand.node, cand.stale = &corev1.Node{}, v1beta1.DisruptionDrifted
	cand.node.Name = "node-2"
	logReplacement(log, "web", cand, cand.stale, []string{"web-x", "web-y"}, "The node is drifted; replacing it with web-x, web-y before it drains")
	if len(*lines) != 1 {
		t.Fatalf("%d lines, want 1", len(*lines))
	}
	line := (*lines)[0]
	if line["msg"] != "Replacing node" || line["action"] != "replace" || line["reason"] != "Drifted" || line["node"] != "node-2" {
		t.Fatalf("line %v", line)
	}
	if by, ok := line["replacements"].([]any); !ok || len(by) != 2 || by[0] != "web-x" {
		t.Fatalf("replacements %v, want [web-x web-y]", line["replacements"])
	}
}
