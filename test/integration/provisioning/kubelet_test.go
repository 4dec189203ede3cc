package provisioning_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/test/stack"
)

// eightPods runs at most 8 pods a node and keeps 2Gi of memory for the kubelet instead
// of the image's 255Mi + 11Mi a pod.
func eightPods() *v1beta1.KubeletConfiguration {
	return &v1beta1.KubeletConfiguration{
		MaxPods:      ptr.To[int32](8),
		KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
}

// wantNodeStatus checks what a claim's Node reports against figures worked by hand.
func wantNodeStatus(f *stack.Fixture, claim v1beta1.NodeClaim, capacity, allocatable map[corev1.ResourceName]string) {
	f.T.Helper()
	node := f.Node(claim.Status.NodeName)
	for _, part := range []struct {
		name string
		got  corev1.ResourceList
		want map[corev1.ResourceName]string
	}{{"capacity", node.Status.Capacity, capacity}, {"allocatable", node.Status.Allocatable, allocatable}} {
		for name, want := range part.want {
			if got := part.got[name]; got.Cmp(resource.MustParse(want)) != 0 {
				f.T.Errorf("Node %s (%s): %s %s = %s, want %s", node.Name, node.Labels[corev1.LabelInstanceTypeStable], part.name, name, got.String(), want)
			}
		}
	}
}

// A pool's kubelet configuration travels with its claims to the cloud, whose kubelets
// report the capacity and allocatable it makes; provisioning packs pods by it. Twenty
// small pods fit one m5.xlarge (58 pods); with 8 pods a node they take three, while a
// pool of the image's defaults takes one for the same pods.
func TestPoolKubeletConfigurationShapesNodesAndPacking(t *testing.T) {
	f := stack.NewFixture(t, nil)
	decideOnAllPodsAtOnce(f)
	xlargeClass(f)
	for _, name := range []string{"capped", "open"} {
		f.Pool(name, 0, func(p *v1beta1.NodePool) {
			p.Spec.Template.Spec.NodeClassRef.Name = "xlarge"
			p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": v1beta1.LabelValue(name)}
			if name == "capped" {
				p.Spec.Template.Spec.Kubelet = eightPods()
			}
		})
		pendingPods(f, "default", name, 20, "100m", "100Mi", func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"example.com/team": name}
		})
	}
	f.Eventually("three capped nodes and one open node run", func() bool {
		return len(runningClaims(f, "capped")) == 3 && len(runningClaims(f, "open")) == 1
	})
	if n, m := len(f.Claims("capped")), len(f.Claims("open")); n != 3 || m != 1 {
		t.Fatalf("%d capped and %d open claims, want 3 and 1", n, m)
	}
	for _, c := range runningClaims(f, "capped") {
		if !equality.Semantic.DeepEqual(c.Spec.Kubelet, eightPods()) {
			t.Errorf("claim %s kubelet %+v, want the pool's", c.Name, c.Spec.Kubelet)
		}
		// m5.xlarge: 4 vCPUs, 16Gi, a 20Gi disk; kube-reserved 80m and 1Gi of disk, 100Mi
		// of memory kept free: 16384 − 2048 − 100 = 14236Mi.
		wantNodeStatus(f, c,
			map[corev1.ResourceName]string{"cpu": "4", "memory": "16Gi", "pods": "8"},
			map[corev1.ResourceName]string{"cpu": "3920m", "memory": "14236Mi", "pods": "8", "ephemeral-storage": "19Gi"})
	}
	for _, c := range runningClaims(f, "open") {
		if c.Spec.Kubelet != nil {
			t.Errorf("claim %s of a pool without a kubelet configuration has %+v", c.Name, c.Spec.Kubelet)
		}
		// The image's 255Mi + 11Mi × 58 pods = 893Mi and 100Mi: 16384 − 993 = 15391Mi.
		wantNodeStatus(f, c,
			map[corev1.ResourceName]string{"pods": "58"},
			map[corev1.ResourceName]string{"cpu": "3920m", "memory": "15391Mi", "pods": "58"})
	}
	f.CheckInvariants()
}

// A warm pool sizes its standby nodes under its kubelet configuration: 15000Mi for
// standby fits an m5.xlarge's default allocatable (15391Mi), not the 14236Mi a 2Gi
// kube-reserved leaves, so the configured warm pool is of m5.2xlarge where one of the
// image's defaults is of m5.xlarge. Ten pending pods then start both configured standby
// nodes, eight pods a node, where one node of the other pool takes them all.
func TestWarmPoolHonoursItsKubeletConfiguration(t *testing.T) {
	f := stack.NewFixture(t, nil)
	decideOnAllPodsAtOnce(f)
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "two-sizes"}, Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"m5.xlarge", "m5.2xlarge"}}})
	for _, name := range []string{"capped", "open"} {
		f.Pool(name, 2, func(p *v1beta1.NodePool) {
			p.Spec.Template.Spec.NodeClassRef.Name = "two-sizes"
			p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": v1beta1.LabelValue(name)}
			p.Spec.Standby.Resources = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("15000Mi")}
			if name == "capped" {
				p.Spec.Template.Spec.Kubelet = eightPods()
			}
		})
	}
	capped := f.WaitForPhase("capped", 2, v1beta1.PhaseStandby)
	for _, c := range capped {
		if c.Status.InstanceType != "m5.2xlarge" || !equality.Semantic.DeepEqual(c.Spec.Kubelet, eightPods()) {
			t.Errorf("standby claim %s: %s with kubelet %+v, want m5.2xlarge with the pool's", c.Name, c.Status.InstanceType, c.Spec.Kubelet)
		}
		// m5.2xlarge: 8 vCPUs, 32Gi; kube-reserved 90m; 32768 − 2048 − 100 = 30620Mi.
		wantNodeStatus(f, c,
			map[corev1.ResourceName]string{"cpu": "8", "memory": "32Gi", "pods": "8"},
			map[corev1.ResourceName]string{"cpu": "7910m", "memory": "30620Mi", "pods": "8"})
	}
	for _, c := range f.WaitForPhase("open", 2, v1beta1.PhaseStandby) {
		if c.Status.InstanceType != "m5.xlarge" {
			t.Errorf("standby claim %s of the image's defaults is %s, want m5.xlarge", c.Name, c.Status.InstanceType)
		}
	}

	for _, name := range []string{"capped", "open"} {
		pendingPods(f, "default", name, 10, "100m", "100Mi", func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"example.com/team": name}
		})
	}
	f.Eventually("both capped standby nodes run", func() bool {
		for _, c := range capped {
			if f.Claim(c.Name).Status.Phase != v1beta1.PhaseRunning {
				return false
			}
		}
		return len(runningClaims(f, "open")) == 1
	})
	if n, m := len(claimsAskedToRun(f, "capped")), len(claimsAskedToRun(f, "open")); n != 2 || m != 1 {
		t.Fatalf("%d capped and %d open claims asked to run for ten pods each, want 2 and 1", n, m)
	}
	f.CheckInvariants()
}

// Changing a pool's kubelet configuration drifts its standby nodes: they are replaced
// by nodes whose kubelets run the new one.
func TestKubeletConfigurationChangeReplacesStandbyNodes(t *testing.T) {
	f := stack.NewFixture(t, nil)
	pool := f.Pool("web", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.Kubelet = eightPods() })
	old := f.WaitForPhase("web", 1, v1beta1.PhaseStandby)[0]
	stack.Patch(f, pool, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.Kubelet.MaxPods = ptr.To[int32](12) })

	var fresh v1beta1.NodeClaim
	f.Eventually("a standby node of the new configuration replaces the old one", func() bool {
		claims := f.Claims("web")
		if len(claims) != 1 || claims[0].Name == old.Name || claims[0].Status.Phase != v1beta1.PhaseStandby {
			return false
		}
		fresh = claims[0]
		return true
	})
	if fresh.Spec.Kubelet == nil || ptr.Deref(fresh.Spec.Kubelet.MaxPods, 0) != 12 {
		t.Fatalf("the new claim's kubelet is %+v, want maxPods 12", fresh.Spec.Kubelet)
	}
	wantNodeStatus(f, fresh, map[corev1.ResourceName]string{"pods": "12"}, map[corev1.ResourceName]string{"pods": "12"})
	if instance, ok := f.Instance(old.Status.InstanceID); ok && instance.State != cloudprovider.StateTerminated && instance.State != cloudprovider.StateShuttingDown {
		t.Errorf("the drifted node's instance is %s", instance.State)
	}
	f.CheckInvariants()
}

// decideOnAllPodsAtOnce widens provisioning's batches: the tests create and mark their
// pods one by one, and count the nodes one decision over all of them makes. (A claim not
// launched yet holds only the pods it was made for, so a later batch would add one.)
func decideOnAllPodsAtOnce(f *stack.Fixture) {
	f.Opts.Provisioning = provisioning.Options{BatchIdle: time.Second, BatchMax: 10 * time.Second}
	f.RestartOperator(f.Opts)
}

// runningClaims returns the pool's claims that run.
func runningClaims(f *stack.Fixture, pool string) []v1beta1.NodeClaim {
	var out []v1beta1.NodeClaim
	for _, c := range f.Claims(pool) {
		if c.Status.Phase == v1beta1.PhaseRunning {
			out = append(out, c)
		}
	}
	return out
}
