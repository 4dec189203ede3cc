package explain

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func listing(pods string) func(*v1beta1.NodeClaim) {
	return func(c *v1beta1.NodeClaim) {
		c.Annotations = map[string]string{v1beta1.AnnotationPlacedPods: pods}
	}
}

// The claim a waiting pod was placed on is the one whose list names it, among those
// still asked to run; of two, the latest placement; a claim running since before the
// pod was created lists another pod of the same name.
func TestPlacedOnReadsTheClaimsLists(t *testing.T) {
	waiting := pod(unschedulable) // shop/web-1, created at t0
	cases := map[string]struct {
		claims []*v1beta1.NodeClaim
		want   string
	}{
		"listed on a launch": {
			claims: []*v1beta1.NodeClaim{
				claim("other", 1, phase(v1beta1.PhaseLaunching, 1, v1beta1.DesiredRunning), listing("shop/web-2,default/web-1")),
				claim("web-a", 1, phase(v1beta1.PhaseLaunching, 1, v1beta1.DesiredRunning), listing("shop/web-0,shop/web-1")),
			},
			want: "web-a",
		},
		"a name that only starts like it": {
			claims: []*v1beta1.NodeClaim{claim("web-a", 1, phase(v1beta1.PhaseLaunching, 1, v1beta1.DesiredRunning), listing("shop/web-10"))},
		},
		"listed on a claim back in standby": {
			claims: []*v1beta1.NodeClaim{claim("web-a", -600, phase(v1beta1.PhaseStandby, 30, v1beta1.DesiredStandby), listing("shop/web-1"))},
		},
		"listed on a claim being deleted": {
			claims: []*v1beta1.NodeClaim{claim("web-a", 1, phase(v1beta1.PhaseLaunching, 1, v1beta1.DesiredRunning), listing("shop/web-1"),
				func(c *v1beta1.NodeClaim) { c.DeletionTimestamp = ptr.To(at(20)) })},
		},
		"listed on a claim that ran before the pod was made": {
			claims: []*v1beta1.NodeClaim{claim("web-a", -600, phase(v1beta1.PhaseRunning, -500, v1beta1.DesiredRunning), listing("shop/web-1"))},
		},
		"listed on a claim that turned Running after the pod was made": {
			claims: []*v1beta1.NodeClaim{claim("web-a", -600, phase(v1beta1.PhaseRunning, 14, v1beta1.DesiredRunning), listing("shop/web-1"))},
			want:   "web-a",
		},
		"placed again: the start after the launch": {
			claims: []*v1beta1.NodeClaim{
				claim("web-launched", 1, phase(v1beta1.PhaseRegistering, 30, v1beta1.DesiredRunning), listing("shop/web-1")),
				claim("web-started", -3600, phase(v1beta1.PhaseStarting, 900, v1beta1.DesiredRunning), listing("shop/web-1")),
			},
			want: "web-started",
		},
		"no list": {
			claims: []*v1beta1.NodeClaim{claim("web-a", 1, phase(v1beta1.PhaseLaunching, 1, v1beta1.DesiredRunning))},
		},
	}
	for name, c := range cases {
		var items []v1beta1.NodeClaim
		for _, cl := range c.claims {
			items = append(items, *cl)
		}
		got := ""
		if found := PlacedOn(waiting, items); found != nil {
			got = found.Name
		}
		if got != c.want {
			t.Errorf("%s: placed on %q, want %q", name, got, c.want)
		}
	}
}

// A waiting pod placed without a reservation is explained from the claim its list
// names, as one placed with a reservation is from its toleration.
func TestExplainAPodPlacedWithoutReservation(t *testing.T) {
	placed := claim("web-a", -3600, phase(v1beta1.PhaseStarting, 2, v1beta1.DesiredRunning), listing("shop/web-1"),
		condition(v1beta1.ConditionStarted, metav1.ConditionTrue, "Started", "", 2))
	waiting := pod(unschedulable)
	found := PlacedOn(waiting, []v1beta1.NodeClaim{*placed})
	if found == nil {
		t.Fatal("no claim found")
	}
	e := Explain(Facts{Pod: waiting, ClaimName: found.Name, Claim: found, Now: t0.Add(10 * time.Second)})
	if e.Path != PathStandby || e.NodeClaim == nil || e.NodeClaim.Name != "web-a" {
		t.Fatalf("explained as path %q, claim %+v", e.Path, e.NodeClaim)
	}
}
