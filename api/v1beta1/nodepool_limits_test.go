package v1beta1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// nodes is the claim count; every other key is a resource of the nodes' capacity.
func TestLimitsSplitNodesFromResources(t *testing.T) {
	l := Limits{LimitNodes: resource.MustParse("10"), corev1.ResourceCPU: resource.MustParse("64"), "nvidia.com/gpu": resource.MustParse("4")}
	if n := l.Nodes(); n == nil || *n != 10 {
		t.Fatalf("Nodes() = %v, want 10", n)
	}
	res := l.Resources()
	if _, ok := res[LimitNodes]; ok || len(res) != 2 || res.Cpu().Value() != 64 || res.Name("nvidia.com/gpu", resource.DecimalSI).Value() != 4 {
		t.Fatalf("Resources() = %v, want cpu 64 and nvidia.com/gpu 4", res)
	}
	if Limits(nil).Nodes() != nil || Limits(nil).Resources() != nil {
		t.Fatal("no limits must mean no node cap and no resource limit")
	}
	if n := (Limits{LimitNodes: resource.MustParse("1e12")}).Nodes(); *n != 1<<31-1 {
		t.Fatalf("a count beyond int32 reads %d, want the largest int32", *n)
	}
}
