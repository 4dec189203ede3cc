package provisioning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
)

// A node only a CapacityBuffer's virtual pods need is no demand; one a real pod shares
// with them is.
func TestOnlyRealPodsMakeDemand(t *testing.T) {
	virtual := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "v", Annotations: map[string]string{capacitybuffer.AnnotationBuffer: "default/b"}}}
	real := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r"}}
	if anyReal([]*corev1.Pod{virtual}) {
		t.Error("a virtual pod alone counts as demand")
	}
	if !anyReal([]*corev1.Pod{virtual, real}) {
		t.Error("a real pod with a virtual one does not count")
	}
}

func TestTheZoneOfAStandbyClaim(t *testing.T) {
	pinned := &v1beta1.NodeClaim{Spec: v1beta1.NodeClaimSpec{Requirements: []v1beta1.NodeSelectorRequirement{
		{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}
	if got := zoneOf(pinned); got != "a" {
		t.Errorf("pinned claim: zone %q, want a", got)
	}
	pinned.Status.Zone = "b"
	if got := zoneOf(pinned); got != "b" {
		t.Errorf("claim with its instance's zone: %q, want b", got)
	}
	if got := zoneOf(&v1beta1.NodeClaim{}); got != "" {
		t.Errorf("claim with no zone: %q", got)
	}
}
