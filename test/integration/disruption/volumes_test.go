package disruption_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/volumes"
	"github.com/stratos-sh/stratos/test/stack"
)

// zonalClaim creates an EBS volume in zone and a claim bound to it, and returns what
// makes a pod mount it.
func zonalClaim(f *stack.Fixture, name, zone string) func(*corev1.Pod) {
	f.T.Helper()
	f.Create(&corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: volumes.EBSDriver, VolumeHandle: "vol-" + name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
			}}}},
		},
	})
	f.Create(&corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(""),
			VolumeName:       "pv-" + name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	})
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
		}})
	}
}

// Consolidation moves no pod where its volume cannot follow. Two nodes in two zones:
// the database's pod, whose volume is in its node's zone, is the cheaper to move and
// would fit on the other node, but kube-scheduler would never place it there; so its
// node stays, and the other node's pod, which may go anywhere, moves onto it instead.
func TestConsolidationLeavesAVolumesPodInItsZone(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("data", 2, underutilized(4))
	standby := f.WaitForPhase("data", 2, v1alpha1.PhaseStandby)
	dbNode, webNode := standby[0], standby[1]
	if dbNode.Status.Zone == webNode.Status.Zone {
		t.Fatalf("the warm pool put both standby nodes in %s; the test needs two zones", dbNode.Status.Zone)
	}
	db := loaded(f, "db", dbNode.Status.NodeName, 0.2, zonalClaim(f, "db-0", dbNode.Status.Zone))
	loaded(f, "web", webNode.Status.NodeName, 0.3, nil)
	start(f, []v1alpha1.NodeClaim{dbNode, webNode})

	f.WaitForClaim(webNode.Name, v1alpha1.PhaseStandby)
	if !running(f, dbNode.Name) {
		t.Fatalf("the database's node %s is %s; its pod cannot leave the volume's zone", dbNode.Name, f.Claim(dbNode.Name).Status.Phase)
	}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(db), &corev1.Pod{}); err != nil {
		t.Fatalf("the database's pod: %v; it must not be evicted", err)
	}
	f.CheckInvariants()
}
