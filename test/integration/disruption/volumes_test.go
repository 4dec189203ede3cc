package disruption_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// Consolidation moves no pod where its volume cannot follow. Two nodes in two zones:
// the database's pod, whose volume is in its node's zone, is the cheaper to move and
// would fit on the other node, but kube-scheduler would never place it there; so its
// node stays, and the other node's pod, which may go anywhere, moves onto it instead.
func TestConsolidationLeavesAVolumesPodInItsZone(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("data", 2, underutilized(4))
	standby := f.WaitForPhase("data", 2, v1beta1.PhaseStandby)
	dbNode, webNode := standby[0], standby[1]
	if dbNode.Status.Zone == webNode.Status.Zone {
		t.Fatalf("the warm pool put both standby nodes in %s; the test needs two zones", dbNode.Status.Zone)
	}
	db := loaded(f, "db", dbNode.Status.NodeName, 0.2, f.ZonalClaim("db-0", dbNode.Status.Zone))
	loaded(f, "web", webNode.Status.NodeName, 0.3, nil)
	start(f, []v1beta1.NodeClaim{dbNode, webNode})

	f.WaitForClaim(webNode.Name, v1beta1.PhaseStandby)
	if !running(f, dbNode.Name) {
		t.Fatalf("the database's node %s is %s; its pod cannot leave the volume's zone", dbNode.Name, f.Claim(dbNode.Name).Status.Phase)
	}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(db), &corev1.Pod{}); err != nil {
		t.Fatalf("the database's pod: %v; it must not be evicted", err)
	}
	f.CheckInvariants()
}
