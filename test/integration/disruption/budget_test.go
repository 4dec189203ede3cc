package disruption_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

// A budget whose schedule never fires (the 30th of February) never applies: the pool
// says so in its BudgetsValid condition and an Event, and its empty node goes back to
// standby as the other budgets allow. On main before the fix, the cron library's "no
// time found" counted as active, and a budget of 0 nodes blocked disruption forever.
func TestABudgetThatNeverFiresNeverApplies(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 1, func(p *v1beta1.NodePool) {
		quickly(3)(p)
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0", Schedule: ptr.To("0 0 30 2 *"), Duration: &v1beta1.Duration{Duration: time.Hour}}}
	})
	f.Eventually("the pool reports the budget that never applies", func() bool {
		pool := &v1beta1.NodePool{}
		if err := f.Env.Client.Get(f.Ctx, clientKey("web"), pool); err != nil {
			return false
		}
		c := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionBudgetsValid)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == nodepool.ReasonBudgetNeverActive && strings.Contains(c.Message, "0 0 30 2 *")
	})
	if !f.EventSeen("web", nodepool.ReasonBudgetNeverActive) {
		t.Fatalf("no %s Event on the pool: %v", nodepool.ReasonBudgetNeverActive, f.EventReasons("web"))
	}
	claim := runningNodes(f, "web", 1)[0]
	f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	f.CheckInvariants()
}

func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }
