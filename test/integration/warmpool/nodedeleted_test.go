package warmpool_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// deleteNode deletes the claim's Node, as `kubectl delete node` does.
func (f *fixture) deleteNode(claim *v1beta1.NodeClaim) {
	f.T.Helper()
	if err := f.Env.Client.Delete(f.Ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: claim.Status.NodeName}}); err != nil {
		f.T.Fatal(err)
	}
}

// A Node deleted under a claim whose instance runs (Running, WarmingUp, Draining) would
// never come back, as a running kubelet does not register again: the claim is removed
// with a NodeDeleted Event and counted, its instance terminated, and the pool warms a
// replacement. On main before the fix each claim waited for ever in its phase, its
// instance running.
func TestANodeDeletedUnderARunningInstanceRemovesItsClaim(t *testing.T) {
	for _, tc := range []struct {
		phase v1beta1.NodeClaimPhase
		// hold brings one claim of the pool to the phase and keeps it there.
		hold func(f *fixture, pool string) *v1beta1.NodeClaim
		// replacement is the phase the pool's replacement claim settles in.
		replacement v1beta1.NodeClaimPhase
	}{
		{v1beta1.PhaseRunning, func(f *fixture, pool string) *v1beta1.NodeClaim {
			return f.runningClaim(pool, nil)
		}, v1beta1.PhaseStandby},
		{v1beta1.PhaseWarmingUp, func(f *fixture, pool string) *v1beta1.NodeClaim {
			// Its image never pulls: it warms up until the warmup timeout (10m).
			f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: pool},
				Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{ImagePullErrors: []string{"registry.example/app:1"}}}})
			f.Pool(pool, 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = pool })
			return &f.WaitForPhase(pool, 1, v1beta1.PhaseWarmingUp)[0]
		}, v1beta1.PhaseWarmingUp},
		{v1beta1.PhaseDraining, func(f *fixture, pool string) *v1beta1.NodeClaim {
			claim := f.runningClaim(pool, nil)
			f.guardedPod(pool, claim.Status.NodeName)
			f.SetDesired(claim.Name, v1beta1.DesiredStandby)
			draining := f.WaitForClaim(claim.Name, v1beta1.PhaseDraining)
			f.WaitForEvent(claim.Name, nodeclaim.ReasonDrainBlocked)
			return draining
		}, v1beta1.PhaseStandby},
	} {
		t.Run(string(tc.phase), func(t *testing.T) {
			f := newFixture(t, nil)
			pool := "node-deleted-" + strings.ToLower(string(tc.phase))
			before := terminations(t, pool, nodeclaim.ReasonNodeDeleted)
			claim := tc.hold(f, pool)
			if claim.Status.Phase != tc.phase {
				t.Fatalf("claim %s is %s, want %s", claim.Name, claim.Status.Phase, tc.phase)
			}
			f.deleteNode(claim)

			f.waitRemoved(claim.Name)
			f.assertRemovedFor(claim, nodeclaim.ReasonNodeDeleted, before)
			note, _ := f.EventNote(claim.Name, nodeclaim.ReasonNodeDeleted)
			for _, want := range []string{claim.Status.NodeName, string(tc.phase), claim.Status.InstanceID} {
				if !strings.Contains(note, want) {
					t.Errorf("the %s Event says %q; want it to name %s", nodeclaim.ReasonNodeDeleted, note, want)
				}
			}
			if replacement := f.WaitForPhase(pool, 1, tc.replacement)[0]; replacement.Name == claim.Name {
				t.Fatal("the claim came back")
			}
			f.CheckInvariants()
		})
	}
}

// A claim launched for a pending pod whose Node is deleted while it initialises is
// removed, and provisioning places the pod again on a new claim. On main before the fix
// the claim waited for its Node without end: the initialization timeout counts from a
// registration, and the pod waited with it.
func TestANodeDeletedWhileInitialisingSendsItsPodsElsewhere(t *testing.T) {
	f := newFixture(t, nil)
	before := terminations(t, "node-deleted-init", nodeclaim.ReasonNodeDeleted)
	// No agent removes the startup taint: every claim of the pool stays Initializing.
	f.Pool("node-deleted-init", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.StartupTaints = []v1beta1.Taint{{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}}
	})
	f.pendingPod("waits", "1")
	first := f.WaitForPhase("node-deleted-init", 1, v1beta1.PhaseInitializing)[0]
	if first.Spec.DesiredState != v1beta1.DesiredRunning {
		t.Fatalf("provisioning's claim %s asks for %s", first.Name, first.Spec.DesiredState)
	}
	f.deleteNode(&first)

	f.waitRemoved(first.Name)
	f.assertRemovedFor(&first, nodeclaim.ReasonNodeDeleted, before)
	f.Eventually("provisioning launches another claim for the pod", func() bool {
		claims := f.Claims("node-deleted-init")
		return len(claims) == 1 && claims[0].Name != first.Name && claims[0].Spec.DesiredState == v1beta1.DesiredRunning
	})
}

// pendingPod creates a pod asking for cpu and marks it Unschedulable, as kube-scheduler
// would: the harness runs none.
func (f *fixture) pendingPod(name, cpu string) *corev1.Pod {
	f.T.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			// The startup taint of the test's pool does not keep the pod off the node.
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	f.Create(pod)
	f.MarkUnschedulable(pod)
	return pod
}
