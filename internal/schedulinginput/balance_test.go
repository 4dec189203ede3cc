package schedulinginput

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

func TestBalanceStandbyTakesFromTheFullestZoneFirst(t *testing.T) {
	claim := func(name, pool, zone string, standby bool) scheduling.Claim {
		c := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.NodeClaimSpec{NodePool: pool}}
		return scheduling.Claim{Claim: c, Standby: standby, Labels: map[string]string{corev1.LabelTopologyZone: zone}}
	}
	claims := []scheduling.Claim{
		claim("b1", "web", "zone-b", true),
		claim("run", "web", "zone-a", false),
		claim("a1", "web", "zone-a", true),
		claim("a2", "web", "zone-a", true),
		claim("a3", "web", "zone-a", true),
		claim("c1", "web", "zone-c", true),
		claim("b2", "web", "zone-b", true),
		claim("other", "batch", "zone-a", true),
	}
	balanceStandby(claims)
	var got []string
	for _, c := range claims {
		got = append(got, c.Claim.Name)
	}
	// web's zone-a (3) gives one; then zone-b and zone-a (2 each) take turns, in the
	// order they came; then the last of each zone, batch's among them. The claim asked
	// to run keeps its place.
	want := []string{"a1", "run", "b1", "a2", "a3", "c1", "b2", "other"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
