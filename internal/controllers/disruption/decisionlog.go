package disruption

import (
	"github.com/go-logr/logr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// outcome is how a decision to disrupt a node ended, the outcome label of
// stratos_disruption_decisions_total.
type outcome string

const (
	// outcomeStandby: the node was asked back to standby; it drains and stops.
	outcomeStandby outcome = "standby"
	// outcomeTerminate: the node's claim was asked to be terminated; it drains, then its
	// claim and instance go.
	outcomeTerminate outcome = "terminate"
	// outcomeReplace: a stale, interrupted or unhealthy node's replacements were started or launched; the node
	// drains once they run (and that drain is a terminate decision of its own).
	outcomeReplace outcome = "replace"
	// outcomeAborted: the node changed since it was chosen (its pods, its state, a
	// do-not-disrupt annotation), or another writer changed or removed its claim first.
	outcomeAborted outcome = "aborted"
	// outcomeBlocked: read again right before the write, a PodDisruptionBudget does not
	// let the node's pods go now (it changed since the pass's picture).
	outcomeBlocked outcome = "blocked"
	// outcomeError: the write failed; the next pass decides again.
	outcomeError outcome = "error"
)

// logDecision writes a disruption that was carried out at INFO: which node of which
// pool, why, and where it goes.
func logDecision(log logr.Logger, pool string, cand candidate, d decision, done outcome) {
	action := "terminate"
	if done == outcomeStandby {
		action = "standby"
	}
	workloads := cand.workloads()
	log.Info("Disrupting node", "nodepool", pool, "node", cand.node.Name, "nodeclaim", cand.claim.Name,
		"reason", string(d.reason), "action", action, "why", d.why, "pods", len(workloads), "podNames", podutil.Names(workloads))
}

// logReplacement writes at INFO that a node's replacements were started, for reason.
func logReplacement(log logr.Logger, pool string, cand candidate, reason v1beta1.DisruptionReason, by []string, why string) {
	workloads := cand.workloads()
	log.Info("Replacing node", "nodepool", pool, "node", cand.node.Name, "nodeclaim", cand.claim.Name,
		"reason", string(reason), "action", "replace", "replacements", by, "why", why, "pods", len(workloads), "podNames", podutil.Names(workloads))
}
