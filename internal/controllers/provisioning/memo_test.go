package provisioning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratos-sh/stratos/internal/state"
)

func pendingPod(uid, resourceVersion string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid, ResourceVersion: resourceVersion}}
}

// A pod no pool could take is not simulated again until it or the cluster changes.
func TestUnschedulablePodsWaitForAChange(t *testing.T) {
	p := &Provisioner{unschedulable: map[types.UID]seen{"stuck": {resourceVersion: "5", version: 9}, "gone": {resourceVersion: "1", version: 9}}}
	names := func(pods []*corev1.Pod) []string {
		var out []string
		for _, pod := range pods {
			out = append(out, pod.Name)
		}
		return out
	}

	got := p.toSimulate(state.Snapshot{Version: 9, Pending: []*corev1.Pod{pendingPod("stuck", "5"), pendingPod("new", "1")}})
	if len(got) != 1 || got[0].Name != "new" {
		t.Fatalf("unchanged: simulated %v, want only the new pod", names(got))
	}
	if _, ok := p.unschedulable["gone"]; ok {
		t.Error("a pod no longer waiting must be forgotten")
	}
	if got := p.toSimulate(state.Snapshot{Version: 9, Pending: []*corev1.Pod{pendingPod("stuck", "6")}}); len(got) != 1 {
		t.Errorf("the pod changed: simulated %v, want it", names(got))
	}
	if got := p.toSimulate(state.Snapshot{Version: 10, Pending: []*corev1.Pod{pendingPod("stuck", "5")}}); len(got) != 1 {
		t.Errorf("the cluster changed: simulated %v, want the pod", names(got))
	}
}
