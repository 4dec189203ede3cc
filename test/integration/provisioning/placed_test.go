package provisioning_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/stack"
)

// A pod alone is placed on a claim launched for it, and a second pod, decided once the
// claim is launched, on that claim while it is on its way (its Node never registers, so
// it stays on its way):
// neither decision reserves, so neither pod is written to. The claim lists both, the
// first in its create request and the second by a patch of the claim, and explain names
// the claim of each.
func TestAClaimListsThePodsPlacedOnIt(t *testing.T) {
	f := stack.NewFixture(t, func(o *nodeclaim.Options) { o.RegistrationTimeout = 10 * time.Minute })
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "mute"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{NeverRegisterPercent: 100}}})
	f.Pool("placed", 0, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "mute" })

	first := pendingPods(f, "default", "placed-first", 1, "100m", "128Mi", nil)[0]
	claim := waitPlaced(f, first)
	// A claim not launched yet holds what it was made for, no more: once its instance
	// type is known to provisioning, it has room for the second pod.
	f.Eventually("provisioning knows the claim's instance type", func() bool {
		for _, c := range f.Op.State.Snapshot().Claims {
			if c.Claim.Name == claim && c.Claim.Status.InstanceType != "" {
				return true
			}
		}
		return false
	})
	second := pendingPods(f, "default", "placed-second", 1, "100m", "128Mi", nil)[0]
	secondOn := waitPlaced(f, second)
	if secondOn != claim {
		t.Fatalf("the second pod was placed on %s, not on %s, which is on its way with room", secondOn, claim)
	}

	want := []string{first.Namespace + "/" + first.Name, second.Namespace + "/" + second.Name}
	var listed []string
	f.Eventually("the claim lists both pods", func() bool {
		got := &v1beta1.NodeClaim{}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim}, got); err != nil {
			t.Fatal(err)
		}
		listed = strings.Split(got.Annotations[v1beta1.AnnotationPlacedPods], ",")
		return slices.Contains(listed, want[0]) && slices.Contains(listed, want[1])
	})
	if len(listed) != 2 {
		t.Errorf("the claim lists %v, want only %v", listed, want)
	}
	for _, pod := range []*corev1.Pod{first, second} {
		if got := tolerationsOf(f, pod); len(got) > 0 {
			t.Errorf("pod %s tolerates reservations %v", pod.Name, got)
		}
		e := explainPod(f, pod)
		if e.NodeClaim == nil || e.NodeClaim.Name != claim || !strings.Contains(e.Summary, "Stratos placed it on NodeClaim "+claim) {
			t.Errorf("pod %s is explained as %q, claim %+v; want it placed on %s", pod.Name, e.Summary, e.NodeClaim, claim)
		}
	}
}

// waitPlaced waits until provisioning has placed the pod on a claim, and names it.
func waitPlaced(f *stack.Fixture, pod *corev1.Pod) string {
	f.T.Helper()
	var claim string
	f.Eventually("pod "+pod.Name+" is placed", func() bool {
		var ok bool
		claim, ok = f.Op.State.Nominated(pod.UID)
		return ok
	})
	return claim
}
