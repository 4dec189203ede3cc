package disruption_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// changeTemplate gives the pool's nodes a new label: every node launched before drifts.
func changeTemplate(f *stack.Fixture, pool string) {
	f.T.Helper()
	stack.Patch(f, &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}}, func(p *v1beta1.NodePool) {
		p.Spec.Template.Labels["example.com/release"] = "2"
	})
}

// gone reports whether a claim no longer exists.
func gone(f *stack.Fixture, name string) bool {
	return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: name}, &v1beta1.NodeClaim{}))
}

// When the template changes, standby nodes are marked Drifted and replaced by fresh
// ones, and the warm pool never has fewer ready standby nodes than its target meanwhile.
func TestDriftedStandbyNodesAreReplacedKeepingTheWarmPool(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 2, nil)
	old := f.WaitForPhase("web", 2, v1beta1.PhaseStandby)
	changeTemplate(f, "web")

	f.Eventually("the standby nodes are marked Drifted", func() bool {
		for _, c := range old {
			if !meta.IsStatusConditionTrue(f.Claim(c.Name).Status.Conditions, v1beta1.ConditionDrifted) {
				return false
			}
		}
		return true
	})
	fewest := 2
	f.Eventually("two fresh standby nodes replace the drifted ones", func() bool {
		ready, fresh := 0, 0
		for _, c := range f.Claims("web") {
			if c.Status.Phase != v1beta1.PhaseStandby || !c.DeletionTimestamp.IsZero() {
				continue
			}
			ready++
			if !slices.ContainsFunc(old, func(o v1beta1.NodeClaim) bool { return o.Name == c.Name }) {
				fresh++
			}
		}
		fewest = min(fewest, ready)
		return fresh == 2 && gone(f, old[0].Name) && gone(f, old[1].Name)
	})
	if fewest < 2 {
		t.Fatalf("the warm pool fell to %d ready standby nodes while drifted ones were replaced", fewest)
	}
	for _, c := range f.Claims("web") {
		if c.Labels["example.com/release"] != "2" {
			t.Fatalf("claim %s was not made from the new template: %v", c.Name, c.Labels)
		}
	}
	f.CheckInvariants()
}

// A drifted running node is replaced: a fresh node runs before the old one drains, its
// pods' new home, and the old one is terminated, with Events saying why.
func TestADriftedRunningNodeIsReplacedBeforeItDrains(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("drifted-running", 1, nil)
	claim := runningNodes(f, "drifted-running", 1)[0]
	loaded(f, "web-0", claim.Status.NodeName, 0.5, nil)
	changeTemplate(f, "drifted-running")

	replacement := replacedBeforeDraining(f, claim, disruption.ReasonDrifted)
	if f.Claim(replacement).Labels["example.com/release"] != "2" {
		t.Fatalf("replacement %s was not made from the new template", replacement)
	}
	// Two decisions: the replacement first, then the drain once it runs.
	wantDecisions(t, "drifted-running", disruption.ReasonDrifted, map[string]float64{"replace": 1, "terminate": 1, "standby": 0})
	f.CheckInvariants()
}

// A node past the pool's expireAfter is replaced like a drifted one. (The one-second
// expiry makes every node of the pool expire; only the running one is looked at.)
func TestAnExpiredRunningNodeIsReplaced(t *testing.T) {
	f := stack.NewFixture(t, nil)
	pool := f.Pool("web", 1, nil)
	claim := runningNodes(f, "web", 1)[0]
	loaded(f, "web-0", claim.Status.NodeName, 0.5, nil)
	second := time.Second
	stack.Patch(f, pool, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.ExpireAfter = &v1beta1.ExpiryDuration{Duration: &second}
	})
	replacedBeforeDraining(f, claim, disruption.ReasonExpired)
	f.CheckInvariants()
}

// replacedBeforeDraining waits until a claim is replaced for reason and gone, checks
// that its replacement ran before it drained, and returns the replacement's name.
func replacedBeforeDraining(f *stack.Fixture, claim *v1beta1.NodeClaim, reason string) string {
	f.T.Helper()
	var note string
	f.Eventually("a replacement is chosen", func() bool {
		var ok bool
		note, ok = f.EventNote(claim.Name, reason)
		return ok
	})
	replacement := replacementIn(f.T, note)
	f.T.Logf("%s: %s", reason, note)
	f.Eventually("the old node goes", func() bool {
		old := &v1beta1.NodeClaim{}
		err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(claim), old)
		if err == nil && old.DeletionTimestamp.IsZero() && old.Status.Phase != v1beta1.PhaseDraining {
			return false
		}
		if !gone(f, claim.Name) && !running(f, replacement) {
			f.T.Fatalf("the old node drains while its replacement %s is %s", replacement, f.Claim(replacement).Status.Phase)
		}
		return apierrors.IsNotFound(err)
	})
	return replacement
}

// A budget of zero for Drifted keeps a drifted node running, while a budget for the
// other reasons lets an empty node of the same pool go.
func TestABudgetForDriftOnlyHoldsDrift(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 2, func(p *v1beta1.NodePool) {
		quickly(4)(p)
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted}}}
	})
	standby := f.WaitForPhase("web", 2, v1beta1.PhaseStandby)
	loaded(f, "web-0", standby[0].Status.NodeName, 0.5, nil)
	claims := start(f, standby)
	changeTemplate(f, "web")

	// The empty node is drifted too: it goes (terminated, not given back) for Empty
	// only once consolidateAfter passes; the busy drifted node has no budget.
	f.Eventually("the empty drifted node goes", func() bool { return gone(f, claims[1].Name) })
	if !running(f, claims[0].Name) || f.EventSeen(claims[0].Name, disruption.ReasonDrifted) {
		t.Fatalf("a drifted node was replaced despite a zero budget for drift: %v", f.EventReasons(claims[0].Name))
	}
	f.CheckInvariants()
}

// replacementIn reads the claim a replacement Event names.
func replacementIn(t *testing.T, note string) string {
	t.Helper()
	_, after, ok := strings.Cut(note, "replacing it with ")
	if !ok {
		t.Fatalf("the Event %q names no replacement", note)
	}
	name, _, _ := strings.Cut(after, " ")
	return strings.TrimSuffix(name, ",")
}

// A claim is made of its pool's template when it is created: if the template changes
// before the claim launches, the node comes up with the old labels and has drifted. Here
// the cloud refuses launches while the template changes; once it launches, the claim is
// marked Drifted and replaced by one with the new label. On main before the fix the hash
// was taken at launch, matched the new template, and the old node stayed for good.
func TestATemplateChangeBeforeTheLaunchIsDrift(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Cloud.SetFaults(fakecloud.Faults{Errors: map[string]fakecloud.ErrorFault{cloudprovider.OpCreate: {Probability: 1}}})
	f.Pool("web", 1, nil)
	var early v1beta1.NodeClaim
	f.Eventually("the claim fails to launch", func() bool {
		claims := f.Claims("web")
		if len(claims) != 1 {
			return false
		}
		early = claims[0]
		launched := meta.FindStatusCondition(early.Status.Conditions, v1beta1.ConditionLaunched)
		return launched != nil && launched.Status == metav1.ConditionFalse
	})
	changeTemplate(f, "web")
	f.Cloud.SetFaults(fakecloud.Faults{})

	f.Eventually("the claim made from the old template is marked Drifted", func() bool {
		return gone(f, early.Name) || meta.IsStatusConditionTrue(f.Claim(early.Name).Status.Conditions, v1beta1.ConditionDrifted)
	})
	f.Eventually("a node with the new label replaces it", func() bool {
		for _, c := range f.Claims("web") {
			if c.Name != early.Name && c.Status.Phase == v1beta1.PhaseStandby && f.Node(c.Status.NodeName).Labels["example.com/release"] == "2" {
				return gone(f, early.Name)
			}
		}
		return false
	})
	f.CheckInvariants()
}
