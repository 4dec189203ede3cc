package nodepool

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func claimIn(phase v1beta1.NodeClaimPhase) v1beta1.NodeClaim {
	return v1beta1.NodeClaim{Status: v1beta1.NodeClaimStatus{Phase: phase}}
}

func conditions(pool *v1beta1.NodePool) (ready, degraded *metav1.Condition) {
	return meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionReady), meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded)
}

func TestStatusCountsClaimsByPhase(t *testing.T) {
	pool := &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	writeStatus(pool, observation{target: 2, created: 1, claims: []v1beta1.NodeClaim{
		claimIn(v1beta1.PhaseStandby), claimIn(v1beta1.PhaseStandby), claimIn(v1beta1.PhaseRunning), claimIn(""),
	}})
	n := pool.Status.Nodes
	if n.Total != 5 || n.Standby != 2 || n.Running != 1 || n.Launching != 2 || pool.Status.ObservedGeneration != 4 || pool.Status.StandbyTarget != 2 {
		t.Fatalf("status %+v", pool.Status)
	}
	ready, degraded := conditions(pool)
	if ready.Status != metav1.ConditionTrue || ready.Reason != ReasonTargetMet || degraded.Status != metav1.ConditionFalse {
		t.Fatalf("ready %+v degraded %+v", ready, degraded)
	}
}

func TestStatusReportsWhyTheTargetIsNotMet(t *testing.T) {
	failing := claimIn(v1beta1.PhaseLaunching)
	failing.Name = "web-1"
	failing.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionLaunched, Status: metav1.ConditionFalse, Reason: "InsufficientCapacity", Message: "no m5.large"}}
	cases := map[string]struct {
		obs    observation
		reason string
	}{
		"warming":         {observation{target: 2}, ""},
		"class missing":   {observation{target: 2, classMissing: true}, ReasonNodeClassNotFound},
		"class not ready": {observation{target: 2, classNotReady: "SubnetsNotFound: no subnet matches"}, ReasonNodeClassNotReady},
		"limited":         {observation{target: 2, limited: "limits.nodes (1)"}, ReasonLimitReached},
		"launch fails":    {observation{target: 2, claims: []v1beta1.NodeClaim{failing}}, ReasonLaunchFailed},
		"ownership lost":  {observation{target: 2, claims: []v1beta1.NodeClaim{failing, lostClaim("web-3", v1beta1.ReasonOwnershipLost), lostClaim("web-2", v1beta1.ReasonInstancesVanished)}}, v1beta1.ReasonOwnershipLost},
		"vanished":        {observation{target: 2, claims: []v1beta1.NodeClaim{failing, lostClaim("web-2", v1beta1.ReasonInstancesVanished)}}, v1beta1.ReasonInstancesVanished},
	}
	for name, tc := range cases {
		pool := &v1beta1.NodePool{}
		pool.Spec.Template.Spec.NodeClassRef = v1beta1.NodeClassReference{Kind: "FakeNodeClass", Name: "gone"}
		writeStatus(pool, tc.obs)
		ready, degraded := conditions(pool)
		if ready.Status != metav1.ConditionFalse {
			t.Errorf("%s: Ready is %s", name, ready.Status)
		}
		if tc.reason == "" {
			if ready.Reason != ReasonWarmingUp || degraded.Status != metav1.ConditionFalse {
				t.Errorf("%s: ready %+v degraded %+v", name, ready, degraded)
			}
			continue
		}
		if degraded.Status != metav1.ConditionTrue || degraded.Reason != tc.reason || ready.Reason != tc.reason {
			t.Errorf("%s: ready %+v degraded %+v, want reason %s", name, ready, degraded, tc.reason)
		}
	}
}

// lostClaim is a running claim that says its instance is lost for reason.
func lostClaim(name, reason string) v1beta1.NodeClaim {
	c := claimIn(v1beta1.PhaseRunning)
	c.Name = name
	c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionInstanceLost, Status: metav1.ConditionTrue, Reason: reason, Message: "instance i-" + name}}
	return c
}

// The pool names how many of its instances are lost and what the first claim by name
// says, so that the message does not change with the order claims are listed in.
func TestStatusCountsTheLostInstances(t *testing.T) {
	claims := []v1beta1.NodeClaim{lostClaim("web-b", v1beta1.ReasonOwnershipLost), claimIn(v1beta1.PhaseStandby), lostClaim("web-a", v1beta1.ReasonOwnershipLost)}
	pool := &v1beta1.NodePool{}
	writeStatus(pool, observation{target: 1, claims: claims})
	_, degraded := conditions(pool)
	want := "2 of the pool's instances exist but are not this cluster's: their claims and Nodes stay as they are until the tag is back or the instances are terminated; claim web-a: instance i-web-a"
	if degraded.Status != metav1.ConditionTrue || degraded.Reason != v1beta1.ReasonOwnershipLost || degraded.Message != want {
		t.Fatalf("degraded %+v, want %q", degraded, want)
	}
}

// unhealthyClaim is a claim in phase whose Unhealthy condition is True.
func unhealthyClaim(name string, phase v1beta1.NodeClaimPhase) v1beta1.NodeClaim {
	c := claimIn(phase)
	c.Name = name
	c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionUnhealthy, Status: metav1.ConditionTrue, Reason: "NotReady", Message: "Node " + name + " is NotReady"}}
	return c
}

// More than half of the running nodes unhealthy is an outage: the pool is Degraded with
// NodesUnhealthy, naming how many and the first claim by name. Half is not; standby
// nodes are not counted; a pool that does not repair reports nothing.
func TestStatusReportsAnOutageOfUnhealthyNodes(t *testing.T) {
	healthy := claimIn(v1beta1.PhaseRunning)
	cases := map[string]struct {
		claims   []v1beta1.NodeClaim
		disabled bool
		want     string // the Degraded message, "" when not Degraded
	}{
		"two of three": {claims: []v1beta1.NodeClaim{unhealthyClaim("web-b", v1beta1.PhaseRunning), unhealthyClaim("web-a", v1beta1.PhaseDraining), healthy},
			want: "2 of the pool's 3 running nodes are unhealthy, more than half: node repair holds back and replaces none of them, as so many at once is an outage to look into (new nodes would likely fail alike), not nodes to repair; claim web-a: Node web-a is NotReady"},
		"one of two": {claims: []v1beta1.NodeClaim{unhealthyClaim("web-a", v1beta1.PhaseRunning), healthy}},
		// Counting the standby nodes, two of six would not be more than half.
		"standby not counted": {claims: []v1beta1.NodeClaim{unhealthyClaim("web-a", v1beta1.PhaseRunning), unhealthyClaim("web-b", v1beta1.PhaseRunning), healthy,
			claimIn(v1beta1.PhaseStandby), claimIn(v1beta1.PhaseStandby), claimIn(v1beta1.PhaseStandby)},
			want: "2 of the pool's 3 running nodes are unhealthy, more than half: node repair holds back and replaces none of them, as so many at once is an outage to look into (new nodes would likely fail alike), not nodes to repair; claim web-a: Node web-a is NotReady"},
		"repair disabled": {claims: []v1beta1.NodeClaim{unhealthyClaim("web-a", v1beta1.PhaseRunning)}, disabled: true},
	}
	for name, tc := range cases {
		pool := &v1beta1.NodePool{}
		if tc.disabled {
			pool.Spec.Repair.Enabled = new(bool)
		}
		writeStatus(pool, observation{claims: tc.claims})
		_, degraded := conditions(pool)
		switch {
		case tc.want == "":
			if degraded.Status != metav1.ConditionFalse {
				t.Errorf("%s: degraded %+v, want False", name, degraded)
			}
		case degraded.Status != metav1.ConditionTrue || degraded.Reason != ReasonNodesUnhealthy || degraded.Message != tc.want:
			t.Errorf("%s: degraded %+v\nwant NodesUnhealthy %q", name, degraded, tc.want)
		}
	}
}
