package provisioning_test

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// catalogAttributes are the instance labels of the fake cloud's types, by name.
func catalogAttributes() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, it := range fakecloud.DefaultCatalog() {
		out[it.Name] = it.Attributes
	}
	return out
}

// nodeOfClaim waits until the claim's Node has registered and returns it.
func nodeOfClaim(f *stack.Fixture, name string) *corev1.Node {
	f.T.Helper()
	f.Eventually("claim "+name+" has a Node", func() bool { return f.Claim(name).Status.NodeName != "" })
	return f.Node(f.Claim(name).Status.NodeName)
}

// wantInstanceLabels fails unless node carries every instance label of its type.
func wantInstanceLabels(t *testing.T, node *corev1.Node) {
	t.Helper()
	it := node.Labels[corev1.LabelInstanceTypeStable]
	attrs := catalogAttributes()[it]
	if len(attrs) == 0 {
		t.Fatalf("Node %s is a %q, which the catalogue does not know", node.Name, it)
	}
	for k, v := range attrs {
		if got, ok := node.Labels[k]; !ok || got != v {
			t.Errorf("Node %s (%s): %s = %q, want %q", node.Name, it, k, got, v)
		}
	}
}

// A pool restricted to more than 3 vCPUs, keeping two instance families to choose
// among, launches types of at least 4 vCPUs, an m-category one for a pod that selects
// it; the Nodes carry the instance labels. A pod that selects one family cannot keep the
// floor: it waits, and its Event says why.
func TestPoolRequirementsAndPodsSelectOnInstanceLabels(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{
			{Key: v1beta1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"3"}},
			{Key: v1beta1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpExists, MinValues: ptr.To[int32](2)},
		}
	})
	pendingPods(f, "default", "general", 1, "3", "512Mi", func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{v1beta1.LabelInstanceCategory: "m"}
	})
	pendingPods(f, "default", "any", 1, "3", "512Mi", nil)
	oneFamily := pendingPods(f, "default", "m5-only", 1, "500m", "512Mi", func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{v1beta1.LabelInstanceFamily: "m5"}
	})[0]
	// One decision for both 3-CPU pods makes one 8-vCPU claim; two decisions, two.
	f.Eventually("the pods get claims", func() bool { return len(claimsAskedToRun(f, "web")) > 0 })

	categories := map[string]bool{}
	for _, c := range claimsAskedToRun(f, "web") {
		node := nodeOfClaim(f, c.Name)
		wantInstanceLabels(t, node)
		if cpus, err := strconv.Atoi(node.Labels[v1beta1.LabelInstanceCPU]); err != nil || cpus < 4 {
			t.Errorf("claim %s launched a %s with %q vCPUs; the pool asks for more than 3", c.Name, node.Labels[corev1.LabelInstanceTypeStable], node.Labels[v1beta1.LabelInstanceCPU])
		}
		categories[node.Labels[v1beta1.LabelInstanceCategory]] = true
	}
	if !categories["m"] {
		t.Errorf("no m-category type was launched for the pod that selects it: categories %v", categories)
	}
	f.Eventually("the one-family pod is told why it waits", func() bool {
		for _, note := range eventNotes(f, oneFamily.Name, "NoNodePoolFits") {
			if containsAll(note, "NodePool web", "1 distinct values of stratos.sh/instance-family", "at least 2 (minValues)") {
				return true
			}
		}
		return false
	})
	f.CheckInvariants()
}

// stripped is the fake catalogue without instance labels: its kubelets register Nodes
// the way EC2's do, not knowing them.
func stripped() []*cloudprovider.InstanceType {
	types := fakecloud.DefaultCatalog()
	for _, it := range types {
		it.Attributes = nil
	}
	return types
}

// labelledCatalog gives the operator the instance labels a stripped cloud does not
// report, as EC2's catalogue does from DescribeInstanceTypes.
type labelledCatalog struct {
	cloudprovider.API
}

func (c labelledCatalog) InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*cloudprovider.InstanceType, error) {
	types, err := c.API.InstanceTypes(ctx, nodeClass)
	attrs := catalogAttributes()
	for _, it := range types {
		it.Attributes = attrs[it.Name]
	}
	return types, err
}

// A kubelet that registers without the instance labels (EC2's: the fleet picks the type
// after the boot configuration is written) gets them from Stratos at registration, for
// standby and running nodes alike, and a pod that selects on them is then placed there.
func TestNodesRegisteredWithoutInstanceLabelsGetThem(t *testing.T) {
	f := stack.NewSerialFixtureOn(t, fakecloud.Options{Catalog: stripped()}, nil)
	f.Op.Stop()
	f.Op = stack.StartOperator(t, f.Env, labelledCatalog{API: f.Cloud}, f.Opts)
	f.Pool("web", 1, nil)
	standby := f.WaitForPhase("web", 1, v1beta1.PhaseStandby)[0]
	wantInstanceLabels(t, nodeOfClaim(f, standby.Name))

	family := f.Node(standby.Status.NodeName).Labels[v1beta1.LabelInstanceFamily]
	pendingPods(f, "default", "web", 1, "500m", "512Mi", func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{v1beta1.LabelInstanceFamily: family}
	})
	f.Eventually("the standby node is asked to run for the pod", func() bool {
		return f.Claim(standby.Name).Spec.DesiredState == v1beta1.DesiredRunning
	})
	f.CheckInvariants()
}
