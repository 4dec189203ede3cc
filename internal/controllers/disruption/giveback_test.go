package disruption

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Nodes given back go first to the zone with the fewest standby nodes; among equals the
// first in order (the longest empty) goes.
func TestNodesGoBackToTheZoneWithTheFewestStandbyNodes(t *testing.T) {
	in := func(name, zone string) candidate {
		return candidate{claim: &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1beta1.NodeClaimStatus{Zone: zone}}}
	}
	pp := &poolPass{standbyIn: map[string]int{"zone-a": 3, "zone-b": 1, "zone-c": 1}}
	cands := []candidate{in("a1", "zone-a"), in("c1", "zone-c"), in("b1", "zone-b"), in("a2", "zone-a")}
	var order []string
	for len(cands) > 0 {
		next := pp.nextToGiveBack(cands)
		order = append(order, cands[next].claim.Name)
		pp.standbyIn[cands[next].claim.Status.Zone]++
		cands = append(cands[:next], cands[next+1:]...)
	}
	want := []string{"c1", "b1", "a1", "a2"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("given back in the order %v, want %v", order, want)
		}
	}
}

// Only a node that can stop and start again goes back to standby: an on-demand node while
// the warm pool has room; a spot node never (it is terminated), nor a stale one, nor any
// once the warm pool is full.
func TestOnlyOnDemandNodesGoBackToStandby(t *testing.T) {
	node := func(capacityType string) candidate {
		return candidate{claim: &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: capacityType}, Status: v1beta1.NodeClaimStatus{CapacityType: capacityType}}}
	}
	room := &poolPass{standby: 1, ceiling: 2}
	if !room.giveBack(node(v1beta1.CapacityTypeOnDemand)) {
		t.Error("an on-demand node did not go back to a warm pool with room")
	}
	if room.giveBack(node(v1beta1.CapacityTypeSpot)) {
		t.Error("a spot node went back to standby")
	}
	drifted := node(v1beta1.CapacityTypeOnDemand)
	drifted.stale = v1beta1.DisruptionDrifted
	if room.giveBack(drifted) {
		t.Error("a drifted node went back to standby")
	}
	full := &poolPass{standby: 2, ceiling: 2}
	if full.giveBack(node(v1beta1.CapacityTypeOnDemand)) {
		t.Error("an on-demand node went back to a full warm pool")
	}
}
