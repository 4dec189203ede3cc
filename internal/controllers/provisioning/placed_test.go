package provisioning

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func namedPod(namespace, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// A claim lists its pods as namespace/name, in name order, and a later placement adds
// only the pods not listed yet, after the others.
func TestPlacedPodsListsEachPodOnce(t *testing.T) {
	first := placedPods("", []*corev1.Pod{namedPod("shop", "web-2"), namedPod("default", "api-1"), namedPod("shop", "web-2")})
	if first != "default/api-1,shop/web-2" {
		t.Fatalf("first placement listed as %q", first)
	}
	more := placedPods(first, []*corev1.Pod{namedPod("shop", "web-2"), namedPod("shop", "web-1")})
	if more != "default/api-1,shop/web-2,shop/web-1" {
		t.Fatalf("a later placement listed as %q", more)
	}
	if again := placedPods(more, []*corev1.Pod{namedPod("shop", "web-1")}); again != more {
		t.Fatalf("placing listed pods again changed the list to %q", again)
	}
}

// Past the bound, the pods that do not fit are left out, and those listed stay.
func TestPlacedPodsStaysWithinItsBound(t *testing.T) {
	long := strings.Repeat("a", 200)
	var pods []*corev1.Pod
	for i := range 100 {
		pods = append(pods, namedPod("ns", long+string(rune('A'+i%26))+string(rune('A'+i/26))))
	}
	value := placedPods("", pods)
	if len(value) > v1beta1.MaxPlacedPodsLength {
		t.Fatalf("the list is %d long, over the bound of %d", len(value), v1beta1.MaxPlacedPodsLength)
	}
	listed := strings.Split(value, ",")
	// Each name is 205 characters, 206 with its comma: 39 of them fit in 8 KiB.
	if want := (v1beta1.MaxPlacedPodsLength + 1) / 206; len(listed) != want {
		t.Fatalf("%d names listed, want %d", len(listed), want)
	}
	if grown := placedPods(value, []*corev1.Pod{namedPod("ns", long+"ZZ")}); grown != value {
		t.Fatalf("a full list changed")
	}
	if short := placedPods("default/x", nil); short != "default/x" {
		t.Fatalf("placing nothing changed the list to %q", short)
	}
}

// A claim without annotations gets them, with the list.
func TestWithPlacedPodsSetsTheAnnotation(t *testing.T) {
	claim := &v1beta1.NodeClaim{}
	withPlacedPods(claim, []*corev1.Pod{namedPod("default", "p")})
	if got := claim.Annotations[v1beta1.AnnotationPlacedPods]; got != "default/p" {
		t.Fatalf("annotation %q", got)
	}
}
