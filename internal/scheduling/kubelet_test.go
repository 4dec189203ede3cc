package scheduling

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A pool's kubelet configuration sizes the nodes it would launch: max pods caps the pods
// per node, reservations take from allocatable; another pool of the same types is not
// affected.
func TestPoolKubeletConfigurationSizesNewNodes(t *testing.T) {
	withKubelet := func(name string, k *v1beta1.KubeletConfiguration) Pool {
		p := poolOf(name, smallCatalog())
		p.Pool.Spec.Template.Spec.Kubelet = k
		return p
	}
	cases := []struct {
		name      string
		kubelet   *v1beta1.KubeletConfiguration
		pods      []*corev1.Pod
		wantTypes []string // first instance type of each launch
	}{
		// Five small pods fit one 2-CPU node of 110 pods.
		{"image defaults", nil, pods(5, "p", "100m", "100Mi"), []string{"small"}},
		// With two pods a node, five need three nodes.
		{"max pods", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](2)}, pods(5, "p", "100m", "100Mi"), []string{"small", "small", "small"}},
		// 1.5 CPU fits a 2-CPU node, not one keeping 1 CPU back for the kubelet.
		{"kube-reserved", &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			pods(1, "p", "1500m", "1Gi"), []string{"medium"}},
		// 7Gi fits 8Gi, not 8Gi less 2Gi kept free by a soft eviction threshold.
		{"soft eviction threshold", &v1beta1.KubeletConfiguration{
			EvictionSoft:            map[string]v1beta1.EvictionThreshold{"memory.available": "25%"},
			EvictionSoftGracePeriod: map[string]v1beta1.Duration{"memory.available": {Duration: time.Minute}},
		}, pods(1, "p", "1", "7Gi"), []string{"medium"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := solve(t, Input{Pods: c.pods, Pools: []Pool{withKubelet("p", c.kubelet)}})
			var got []string
			for _, l := range r.Launches {
				got = append(got, l.InstanceTypes[0])
			}
			if len(r.Unschedulable) > 0 || !slices.Equal(got, c.wantTypes) {
				t.Fatalf("launched %v (unschedulable %d), want %v", got, len(r.Unschedulable), c.wantTypes)
			}
		})
	}

	t.Run("per pool", func(t *testing.T) {
		capped := withKubelet("capped", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](1)})
		open := withKubelet("open", nil)
		in := Input{
			Pods:  append(pods(2, "capped", "100m", "100Mi", selecting(v1beta1.LabelNodePool, "capped")), pods(2, "open", "100m", "100Mi", selecting(v1beta1.LabelNodePool, "open"))...),
			Pools: []Pool{capped, open},
		}
		r := solve(t, in)
		launches := map[string]int{}
		for _, l := range r.Launches {
			launches[l.Pool]++
		}
		if launches["capped"] != 2 || launches["open"] != 1 {
			t.Fatalf("launches by pool %v, want 2 of the pool of one pod a node and 1 of the other", launches)
		}
	})
}

// A type whose kubelet keeps all its CPU or memory back runs no pod, so it is never
// launched, not even for a pod that asks for nothing; a pool whose kubelet leaves no
// type room launches nothing.
func TestATypeTheKubeletLeavesNoRoomIsNeverLaunched(t *testing.T) {
	pool := poolOf("p", smallCatalog())
	// small has 2 CPUs, all kept back; medium and large keep 2 of 4 and 8.
	pool.Pool.Spec.Template.Spec.Kubelet = &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	r := solve(t, Input{Pods: pods(1, "best-effort", "0", "0"), Pools: []Pool{pool}})
	if len(r.Unschedulable) > 0 || len(r.Launches) != 1 {
		t.Fatalf("launches %+v (unschedulable %d), want one", r.Launches, len(r.Unschedulable))
	}
	if got := r.Launches[0].InstanceTypes; slices.Contains(got, "small") || got[0] != "medium" {
		t.Fatalf("launch may be %v, want medium first and never small", got)
	}

	pool.Pool.Spec.Template.Spec.Kubelet.KubeReserved[corev1.ResourceCPU] = resource.MustParse("8")
	r = solve(t, Input{Pods: pods(1, "best-effort", "0", "0"), Pools: []Pool{pool}})
	if len(r.Launches) != 0 || len(r.Unschedulable) != 1 {
		t.Fatalf("launches %+v (unschedulable %d), want none and the pod unschedulable", r.Launches, len(r.Unschedulable))
	}
}
