package windows

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func officePool(preWarm *v1beta1.Duration) *v1beta1.NodePool {
	return &v1beta1.NodePool{Spec: v1beta1.NodePoolSpec{
		Standby: v1beta1.Standby{Min: 1},
		Limits:  v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("50")},
		Windows: []v1beta1.Window{
			{Name: "office-hours", Days: "mon-fri", Hours: "8-17", TimeZone: "Europe/Berlin", MinStandby: ptr.To[int32](10), MinRunning: ptr.To[int32](2), PreWarm: preWarm},
			{Name: "night", Hours: "22-5", TimeZone: "Europe/Berlin", MaxNodes: ptr.To[int32](0)},
		},
	}}
}

func berlinAt(t *testing.T, hour, minute int) time.Time {
	t.Helper()
	location, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return time.Date(2026, 11, 23, hour, minute, 0, 0, location) // a Monday
}

func TestTargetsFollowTheWindowInForce(t *testing.T) {
	pool := officePool(v1beta1.NewDuration(0))
	cases := []struct {
		name                   string
		hour, minute           int
		window                 string
		minStandby, minRunning int32
		maxNodes               int32
		next                   time.Time
	}{
		{"before office hours", 7, 0, "", 1, 0, 50, berlinAt(t, 8, 0)},
		{"office hours", 9, 0, "office-hours", 10, 2, 50, berlinAt(t, 18, 0)},
		{"evening", 19, 0, "", 1, 0, 50, berlinAt(t, 22, 0)},
		{"night", 23, 0, "night", 1, 0, 0, berlinAt(t, 0, 0).AddDate(0, 0, 1).Add(6 * time.Hour)},
	}
	for _, c := range cases {
		got, err := For(pool, berlinAt(t, c.hour, c.minute))
		if err != nil {
			t.Fatal(err)
		}
		if got.Window != c.window || got.MinStandby != c.minStandby || got.MinRunning != c.minRunning || *got.MaxNodes != c.maxNodes || !got.Next.Equal(c.next) {
			t.Errorf("%s: targets %+v (max nodes %d), want window %q, standby %d, running %d, max nodes %d, next %s",
				c.name, got, *got.MaxNodes, c.window, c.minStandby, c.minRunning, c.maxNodes, c.next)
		}
	}
}

func TestPreWarmRaisesTheTargetsBeforeTheWindowOpens(t *testing.T) {
	pool := officePool(nil) // the default: 10 minutes
	before, err := For(pool, berlinAt(t, 7, 49))
	if err != nil {
		t.Fatal(err)
	}
	if before.MinStandby != 1 || len(before.PreWarming) != 0 || !before.Next.Equal(berlinAt(t, 7, 50)) {
		t.Fatalf("at 07:49: %+v; want standby 1 and the pre-warm at 07:50 as the next change", before)
	}
	warming, _ := For(pool, berlinAt(t, 7, 50))
	if warming.Window != "" || warming.MinStandby != 10 || warming.MinRunning != 2 || len(warming.PreWarming) != 1 || !warming.Next.Equal(berlinAt(t, 8, 0)) {
		t.Fatalf("at 07:50: %+v; want office-hours' targets, pre-warming, next change 08:00", warming)
	}
	// The night's cap waits for 22:00 even though it is within ten minutes.
	evening, _ := For(pool, berlinAt(t, 21, 55))
	if *evening.MaxNodes != 50 {
		t.Fatalf("at 21:55 the cap is %d; a cap does not come early", *evening.MaxNodes)
	}
}

func TestPreWarmNeverLowersTheTargets(t *testing.T) {
	pool := officePool(nil)
	pool.Spec.Windows = append(pool.Spec.Windows, v1beta1.Window{Name: "lunch", Days: "mon-fri", Hours: "12", TimeZone: "Europe/Berlin", MinStandby: ptr.To[int32](3)})
	// 11:55: office hours are in force, lunch opens in five minutes with a lower target.
	got, _ := For(pool, berlinAt(t, 11, 55))
	if got.Window != "office-hours" || got.MinStandby != 10 || len(got.PreWarming) != 0 {
		t.Fatalf("at 11:55: %+v; want office hours' 10 kept while lunch pre-warms", got)
	}
	// At 12:00 lunch, declared last, wins whole.
	if got, _ := For(pool, berlinAt(t, 12, 0)); got.Window != "lunch" || got.MinStandby != 3 || got.MinRunning != 0 {
		t.Fatalf("at 12:00: %+v; want lunch's targets", got)
	}
}

func TestAWindowThatCannotBeReadLeavesTheSpecTargets(t *testing.T) {
	pool := officePool(nil)
	pool.Spec.Windows[0].TimeZone = "Mars/Olympus_Mons"
	got, err := For(pool, berlinAt(t, 9, 0))
	if err == nil || got.MinStandby != 1 || got.Window != "" || *got.MaxNodes != 50 {
		t.Fatalf("targets %+v, error %v; want the spec's targets and an error", got, err)
	}
}
