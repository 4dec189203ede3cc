package budgets

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestBudgetsAllowTheLeastOfTheActiveOnes(t *testing.T) {
	monday9 := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC) // a Monday
	tz := v1beta1.TimeZone("Europe/Berlin")
	workHours := v1beta1.Budget{Nodes: "0", Schedule: ptr.To("0 9 * * mon-fri"), Duration: &v1beta1.Duration{Duration: 8 * time.Hour}}
	cases := []struct {
		name    string
		budgets []v1beta1.Budget
		reason  v1beta1.DisruptionReason
		total   int
		now     time.Time
		want    int
	}{
		{"default 10% rounds up", nil, v1beta1.DisruptionEmpty, 5, monday9, 1},
		{"10% of 30", []v1beta1.Budget{{Nodes: "10%"}}, v1beta1.DisruptionEmpty, 30, monday9, 3},
		{"a count", []v1beta1.Budget{{Nodes: "2"}}, v1beta1.DisruptionDrifted, 30, monday9, 2},
		{"a count above the pool", []v1beta1.Budget{{Nodes: "50"}}, v1beta1.DisruptionDrifted, 3, monday9, 3},
		{"0% blocks", []v1beta1.Budget{{Nodes: "0%"}}, v1beta1.DisruptionEmpty, 30, monday9, 0},
		{"the least applies", []v1beta1.Budget{{Nodes: "50%"}, {Nodes: "4"}}, v1beta1.DisruptionEmpty, 30, monday9, 4},
		{"a budget of other reasons does not apply", []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted}}, {Nodes: "5"}}, v1beta1.DisruptionEmpty, 30, monday9, 5},
		{"a budget of this reason applies", []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted}}, {Nodes: "5"}}, v1beta1.DisruptionDrifted, 30, monday9, 0},
		{"within the schedule's duration", []v1beta1.Budget{workHours, {Nodes: "5"}}, v1beta1.DisruptionEmpty, 30, monday9, 0},
		{"after the duration", []v1beta1.Budget{workHours, {Nodes: "5"}}, v1beta1.DisruptionEmpty, 30, monday9.Add(8 * time.Hour), 5},
		{"before the schedule", []v1beta1.Budget{workHours, {Nodes: "5"}}, v1beta1.DisruptionEmpty, 30, monday9.Add(-time.Hour), 5},
		{"on a weekend", []v1beta1.Budget{workHours, {Nodes: "5"}}, v1beta1.DisruptionEmpty, 30, monday9.Add(-48 * time.Hour), 5},
		// 09:30 UTC is 10:30 in Berlin: a schedule at 10:00 Berlin time is active.
		{"in the budget's time zone", []v1beta1.Budget{{Nodes: "0", Schedule: ptr.To("0 10 * * *"), Duration: &v1beta1.Duration{Duration: time.Hour}, TimeZone: &tz}}, v1beta1.DisruptionEmpty, 30, monday9, 0},
		{"a macro", []v1beta1.Budget{{Nodes: "0", Schedule: ptr.To("@daily"), Duration: &v1beta1.Duration{Duration: 10 * time.Hour}}}, v1beta1.DisruptionEmpty, 30, monday9, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Allowed(c.budgets, c.reason, c.total, c.now)
			if err != nil || got != c.want {
				t.Fatalf("allowed = %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestAnUnreadableBudgetAllowsNothing(t *testing.T) {
	bad := v1beta1.TimeZone("Mars/Olympus")
	for _, b := range []v1beta1.Budget{
		{Nodes: "5", Schedule: ptr.To("not a cron"), Duration: &v1beta1.Duration{Duration: time.Hour}},
		{Nodes: "5", Schedule: ptr.To("0 9 * * *"), Duration: &v1beta1.Duration{Duration: time.Hour}, TimeZone: &bad},
	} {
		if n, err := Allowed([]v1beta1.Budget{b}, v1beta1.DisruptionEmpty, 30, time.Now()); err == nil || n != 0 {
			t.Errorf("budget %+v: allowed %d, err %v; want 0 and an error", b, n, err)
		}
	}
}

// A schedule that never fires is never active, so it restricts nothing, and Check names
// it. On main before the fix it counted as always active and blocked disruption forever.
func TestAScheduleThatNeverFiresNeverApplies(t *testing.T) {
	never := v1beta1.Budget{Nodes: "0", Schedule: ptr.To("0 0 30 2 *"), Duration: &v1beta1.Duration{Duration: time.Hour}}
	now := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	if active, err := Active(never, now); active || err != nil {
		t.Fatalf("Active = %v, %v; want never active", active, err)
	}
	if n, err := Allowed([]v1beta1.Budget{never, {Nodes: "5"}}, v1beta1.DisruptionEmpty, 30, now); n != 5 || err != nil {
		t.Fatalf("Allowed = %d, %v; want the other budget's 5", n, err)
	}
	blocking, err := Check([]v1beta1.Budget{{Nodes: "5"}, never}, now)
	if !errors.Is(err, ErrNeverFires) || !strings.Contains(err.Error(), "budget 1") || blocking {
		t.Fatalf("Check = %v (blocking %v), want budget 1 named as never firing, not blocking", err, blocking)
	}
	leap := v1beta1.Budget{Nodes: "0", Schedule: ptr.To("0 0 29 2 *"), Duration: &v1beta1.Duration{Duration: time.Hour}}
	if _, err := Check([]v1beta1.Budget{leap}, now); err != nil {
		t.Fatalf("the 29th of February fires every leap year: %v", err)
	}
	unreadable := v1beta1.Budget{Nodes: "1", Schedule: ptr.To("not a cron"), Duration: &v1beta1.Duration{Duration: time.Hour}}
	if blocking, err := Check([]v1beta1.Budget{unreadable, never}, now); err == nil || !blocking {
		t.Fatalf("Check = %v (blocking %v), want an unreadable schedule reported as blocking", err, blocking)
	}
}
