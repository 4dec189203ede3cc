package provisioning_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// tolerationsOf reads the pod's reservation tolerations as the API server has them.
func tolerationsOf(f *stack.Fixture, pod *corev1.Pod) []string {
	f.T.Helper()
	got := &corev1.Pod{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		f.T.Fatal(err)
	}
	var claims []string
	for _, tol := range got.Spec.Tolerations {
		if tol.Key == v1beta1.TaintReservedKey {
			claims = append(claims, tol.Value)
		}
	}
	return claims
}

// One decision of pods of two shapes reserves its claims: each pod tolerates the
// reservation of the claim it was placed on, and the claim is marked reserved. One
// decision of identical pods reserves nothing: its claims are not marked and its pods
// get no toleration (tolerations only grow, so none once the pods are bound means none
// ever).
func TestADecisionReservesOnlyWhenItsPodsDiffer(t *testing.T) {
	f := stack.NewSerialFixtureWith(t, fakecloud.Options{}, func(o *stack.OperatorOptions) {
		// The pods are created one by one; a wide window decides on each group at once.
		o.Provisioning = provisioning.Options{BatchIdle: time.Second, BatchMax: 5 * time.Second}
	})
	for _, team := range []string{"mixed", "alike"} {
		f.Pool("reserve-"+team, 0, func(p *v1beta1.NodePool) {
			p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": v1beta1.LabelValue(team)}
		})
	}
	selecting := func(team string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"example.com/team": team} }
	}
	nominated := func(pods []*corev1.Pod) bool {
		for _, pod := range pods {
			if _, ok := f.Op.State.Nominated(pod.UID); !ok {
				return false
			}
		}
		return true
	}

	mixed := append(pendingPods(f, "default", "mixed-small", 2, "500m", "512Mi", selecting("mixed")),
		pendingPods(f, "default", "mixed-large", 1, "1500m", "512Mi", func(p *corev1.Pod) {
			selecting("mixed")(p)
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("2Gi")
		})...)
	f.Eventually("each pod of two shapes tolerates the reservation of the claim it was placed on", func() bool {
		for _, pod := range mixed {
			claim, ok := f.Op.State.Nominated(pod.UID)
			if !ok || !slices.Contains(tolerationsOf(f, pod), claim) || !f.Op.State.Reserved(claim) {
				return false
			}
		}
		return true
	})

	alike := pendingPods(f, "default", "alike", 3, "500m", "512Mi", selecting("alike"))
	f.Eventually("the identical pods are placed", func() bool { return nominated(alike) })
	placed := map[*corev1.Pod]string{}
	for _, pod := range alike {
		placed[pod], _ = f.Op.State.Nominated(pod.UID)
	}
	for _, claim := range slices.Compact(slices.Sorted(maps.Values(placed))) {
		if f.Op.State.Reserved(claim) {
			t.Errorf("claim %s of identical pods is reserved", claim)
		}
	}
	for pod, claim := range placed {
		bind(f, pod, f.WaitForClaim(claim, v1beta1.PhaseRunning).Status.NodeName)
	}
	for _, pod := range alike {
		if got := tolerationsOf(f, pod); len(got) > 0 {
			t.Errorf("pod %s of identical pods tolerates reservations %v", pod.Name, got)
		}
	}
}
