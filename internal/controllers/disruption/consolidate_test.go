package disruption

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// cluster is a scheduling input of nodes with 4 CPUs, each running pods of the given
// CPU requests (in millicores), with the candidate for each node.
func cluster(loads ...[]int64) (scheduling.Input, []candidate) {
	var in scheduling.Input
	var cands []candidate
	for i, load := range loads {
		name := fmt.Sprintf("node-%d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
		cand := candidate{claim: &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim-" + name}}, node: node}
		for j, milli := range load {
			cand.pods = append(cand.pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, j), Namespace: "default", UID: k8stypes.UID(fmt.Sprintf("%s-%d", name, j)),
					OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", Controller: ptr.To(true)}}},
				Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}}}},
			})
		}
		in.Nodes = append(in.Nodes, scheduling.Node{Node: node, Pods: cand.workloads()})
		cands = append(cands, cand)
	}
	return in, cands
}

func TestNodesWhosePodsFitOnFewerGoTogether(t *testing.T) {
	// Three nodes at a quarter each: the pods of two fit on the third.
	in, cands := cluster([]int64{1000}, []int64{1000}, []int64{1000})
	if got := largest(cands, newRoom(in, nil).fitsElsewhere); len(got) != 2 {
		t.Fatalf("%d nodes can go together, want 2", len(got))
	}
}

func TestBusyNodesStay(t *testing.T) {
	// Each node is 60% used: no node's pod fits in another's 40%.
	in, cands := cluster([]int64{2400}, []int64{2400}, []int64{2400})
	if got := largest(cands, newRoom(in, nil).fitsElsewhere); len(got) != 0 {
		t.Fatalf("%d nodes chosen where none fits elsewhere", len(got))
	}
	if newRoom(in, nil).fitsElsewhere(cands[:1]) {
		t.Fatal("a 60% pod must not fit in 40%")
	}
}

func TestPodsSplitAcrossSeveralNodes(t *testing.T) {
	// Two small pods on one node each fit on a different other node.
	in, cands := cluster([]int64{3000}, []int64{3000}, []int64{1000, 1000})
	if !newRoom(in, nil).fitsElsewhere(cands[2:]) {
		t.Fatal("the third node's two pods fit, one on each other node")
	}
}

func TestWaitingPodsKeepTheRoomConsolidationWouldUse(t *testing.T) {
	in, cands := cluster([]int64{3000}, []int64{1000})
	waiting := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "waiting", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	if !newRoom(in, nil).fitsElsewhere(cands[1:]) {
		t.Fatal("without waiting pods the second node's pod fits on the first")
	}
	if newRoom(in, []*corev1.Pod{waiting}).fitsElsewhere(cands[1:]) {
		t.Fatal("a waiting pod needs the room; the second node must stay")
	}
}

func TestCheapestToDisruptFirst(t *testing.T) {
	_, cands := cluster([]int64{500, 500}, []int64{2000}, []int64{100})
	c := &Controller{settle: settling{}}
	c.cheapestToDisruptFirst(cands)
	if cands[0].node.Name != "node-2" || cands[1].node.Name != "node-1" || cands[2].node.Name != "node-0" {
		t.Fatalf("order %s, %s, %s; want fewest pods, then least CPU", cands[0].node.Name, cands[1].node.Name, cands[2].node.Name)
	}
}

func TestAnEmptyStratosNodeIsNoRoom(t *testing.T) {
	// A busy node's pod would fit on an empty node of a pool, which goes back itself:
	// moving the pod there would only trade one node for the other.
	in, cands := cluster([]int64{2400}, nil)
	in.Nodes[1].Node.Labels[v1beta1.LabelNodePool] = "web"
	if newRoom(in, nil).fitsElsewhere(cands[:1]) {
		t.Fatal("an empty node of a pool must not count as room")
	}
	delete(in.Nodes[1].Node.Labels, v1beta1.LabelNodePool)
	if !newRoom(in, nil).fitsElsewhere(cands[:1]) {
		t.Fatal("an empty node Stratos does not manage is room")
	}
}
