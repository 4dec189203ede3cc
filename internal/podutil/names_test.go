package podutil

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A log line names the first pods in order and counts the others.
func TestNamesListsAFewAndCountsTheRest(t *testing.T) {
	pods := func(n int) []*corev1.Pod {
		var out []*corev1.Pod
		for i := n - 1; i >= 0; i-- {
			out = append(out, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("web-%d", i)}})
		}
		return out
	}
	for n, want := range map[int]string{
		0: "",
		1: "default/web-0",
		5: "default/web-0, default/web-1, default/web-2, default/web-3, default/web-4",
		8: "default/web-0, default/web-1, default/web-2, default/web-3, default/web-4 and 3 other(s)",
	} {
		if got := Names(pods(n)); got != want {
			t.Errorf("%d pods: %q, want %q", n, got, want)
		}
	}
}
