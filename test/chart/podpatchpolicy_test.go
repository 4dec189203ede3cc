package chart_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/test/harness"
)

// podPatchPolicyKinds are the kinds of the chart's policy on the operator's pod writes.
var podPatchPolicyKinds = []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

// The chart renders the pod-patch policy and its binding by default, bound to the
// operator's ServiceAccount by name, and neither with podPatchPolicy.enabled false.
func TestPodPatchPolicyIsRenderedByDefaultAndCanBeTurnedOff(t *testing.T) {
	on := render(t, valuesFile(t, map[string]any{
		"settings": map[string]any{"clusterName": "test"}, "serviceAccount": map[string]any{"name": "ops"}}))
	for _, kind := range podPatchPolicyKinds {
		if len(ofKind(on, kind)) != 1 {
			t.Errorf("by default the chart renders %d %s, want 1", len(ofKind(on, kind)), kind)
		}
	}
	if policies := ofKind(on, "ValidatingAdmissionPolicy"); len(policies) == 1 {
		conditions, _, _ := unstructured.NestedSlice(policies[0].Object, "spec", "matchConditions")
		if want := "system:serviceaccount:" + releaseNamespace + ":ops"; !strings.Contains(fmt.Sprint(conditions), want) {
			t.Errorf("the policy's match conditions %v do not name %s", conditions, want)
		}
	}
	off := render(t, valuesFile(t, map[string]any{
		"settings": map[string]any{"clusterName": "test"}, "podPatchPolicy": map[string]any{"enabled": false}}))
	for _, kind := range podPatchPolicyKinds {
		if n := len(ofKind(off, kind)); n != 0 {
			t.Errorf("with podPatchPolicy.enabled false the chart renders %d %s", n, kind)
		}
	}
}

// With the chart's roles and its pod-patch policy applied to a real API server, the
// operator's ServiceAccount can add the toleration Stratos's reservations add (with the
// product's own patch), and cannot change a pod's image, a deadline, its labels or annotations or add another
// toleration; an administrator still can. Without the policy the chart's roles would let
// the ServiceAccount do all of it, and the test fails waiting for the first refusal.
func TestPodPatchPolicyLetsTheOperatorOnlyAddReservations(t *testing.T) {
	env := harness.StartWithoutCRDsT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := adminClient(t, env)
	objects := render(t, valuesFile(t, map[string]any{"settings": map[string]any{"clusterName": "test", "cloudProvider": "fake"}}))
	operatorUser := installChartRoles(ctx, t, admin, objects)
	for _, kind := range podPatchPolicyKinds {
		applyObjects(ctx, t, admin, ofKind(objects, kind))
	}
	asOperator := clientAs(t, env, operatorUser)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers:  []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
			Tolerations: []corev1.Toleration{{Key: "example.com/gpu", Operator: corev1.TolerationOpExists}},
		},
	}
	if err := admin.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The chart's roles are in force once the operator may patch the pod at all (an
	// empty patch changes nothing the policy looks at).
	if err := eventually(ctx, func() error {
		return asOperator.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{}`)))
	}); err != nil {
		t.Fatalf("the chart's roles do not let the operator patch a pod: %v", err)
	}
	// The policy is in force once a label change is refused: the API server loads
	// policies from an informer, a moment after they are stored.
	relabel := 0
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		relabel++
		err := operatorPatch(ctx, asOperator, pod, func(p *corev1.Pod) { p.Labels["app"] = fmt.Sprintf("other-%d", relabel) })
		return refusedByPolicy(err), nil
	})
	if err != nil {
		t.Fatalf("the operator's ServiceAccount still changes a pod's labels: no policy refuses it (%v)", err)
	}

	for what, change := range map[string]func(*corev1.Pod){
		"change the image": func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry.example/miner:1" },
		// The spec fields a pod update can change besides images and tolerations.
		"set a deadline":    func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](1) },
		"add an annotation": func(p *corev1.Pod) { p.Annotations = map[string]string{"example.com/x": "y"} },
		"tolerate another taint": func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists})
		},
		"tolerate every reserved node": func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "stratos.sh/reserved", Operator: corev1.TolerationOpExists})
		},
	} {
		if err := operatorPatch(ctx, asOperator, pod, change); !refusedByPolicy(err) {
			t.Errorf("the operator could %s: %v", what, err)
		}
	}

	// Stratos's own reservation patches go through, one claim and then another.
	for _, claim := range []string{"web-abcde", "web-fghij"} {
		current := &corev1.Pod{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(pod), current); err != nil {
			t.Fatal(err)
		}
		updated, patch := provisioning.Reservation(current, claim)
		if err := asOperator.Patch(ctx, updated, patch); err != nil {
			t.Fatalf("the policy refused Stratos's reservation patch for %s: %v", claim, err)
		}
		if !slices.Contains(updated.Spec.Tolerations, provisioning.ReservationToleration(claim)) {
			t.Errorf("the stored pod lacks the reservation toleration of %s: %+v", claim, updated.Spec.Tolerations)
		}
	}

	// The policy binds the operator alone: an administrator changes the image.
	if err := operatorPatch(ctx, admin, pod, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry.example/app:2" }); err != nil {
		t.Errorf("an administrator could not change the image: %v", err)
	}
}

// operatorPatch reads the pod, changes it and patches it, all as c.
func operatorPatch(ctx context.Context, c client.Client, pod *corev1.Pod, change func(*corev1.Pod)) error {
	current := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), current); err != nil {
		return err
	}
	changed := current.DeepCopy()
	change(changed)
	return c.Patch(ctx, changed, client.MergeFrom(current))
}

// refusedByPolicy reports whether err is the chart's policy refusing a request.
func refusedByPolicy(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy 'stratos-pod-patches'")
}
