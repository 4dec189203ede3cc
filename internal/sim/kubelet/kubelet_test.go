package kubelet

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
	"github.com/stratos-sh/stratos/internal/volumes"
	"github.com/stratos-sh/stratos/test/harness"
)

// eventually polls cond every 20 ms for up to 10 s.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	simtest.EventuallyWithin(t, 10*time.Second, what, cond)
}

func TestKubelet(t *testing.T) {
	env := harness.StartT(t)
	c, clk := newCloud(t, fakecloud.Options{})
	p := c.Physics()

	ctx, cancel := context.WithCancel(logf.IntoContext(context.Background(), testr.NewWithOptions(t, testr.Options{Verbosity: 1})))
	done := make(chan error)
	go func() {
		done <- NewKubelet(c, env.Client, KubeletOptions{HeartbeatInterval: 200 * time.Millisecond}).Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("kubelet: %v", err)
		}
	})

	req := request("a")
	req.Labels = map[string]string{v1beta1.LabelNodePool: "web"}
	req.Taints = []corev1.Taint{v1beta1.StandbyTaint}
	inst := create(t, c, req)
	c.SetFaults(fakecloud.Faults{NeverRegister: 1})
	lost := create(t, c, request("lost"))
	c.SetFaults(fakecloud.Faults{})
	name := view(t, c, inst.ID).NodeName

	node := &corev1.Node{}
	getNode := func(ctx context.Context) error { return env.Client.Get(ctx, client.ObjectKey{Name: name}, node) }
	nodeIs := func(what string, cond func() bool) {
		t.Helper()
		eventually(t, what, func(ctx context.Context) (bool, error) {
			if err := getNode(ctx); err != nil {
				return false, err
			}
			return cond(), nil
		})
	}

	// Registration, NotReady until the network is up.
	clk.Step(p.LaunchDelay + p.BootDelay)
	nodeIs("the Node registered", func() bool { return condition(node, corev1.NodeReady) != nil })
	if r := ready(node); r.Status != corev1.ConditionFalse || r.Reason != "KubeletNotReady" || r.Message != messageNetworkNotReady {
		t.Errorf("Ready at registration = %+v", r)
	}
	checkRegistration(t, node, inst, view(t, c, inst.ID).InstanceType, req)

	// A Node that others changed keeps their changes.
	patched := node.DeepCopy()
	patched.Labels["example.com/added"] = "by-stratos"
	added := corev1.Taint{Key: "example.com/added", Effect: corev1.TaintEffectNoExecute}
	patched.Spec.Taints = append(patched.Spec.Taints, added)
	if err := env.Client.Patch(context.Background(), patched, client.MergeFrom(node)); err != nil {
		t.Fatal(err)
	}

	clk.Step(p.ReadyDelay)
	nodeIs("the Node Ready", func() bool { return ready(node).Status == corev1.ConditionTrue })
	if network := condition(node, corev1.NodeNetworkUnavailable); network == nil || network.Status != corev1.ConditionFalse {
		t.Errorf("NetworkUnavailable = %+v", network)
	}
	// Once Ready, the Node's CSINode publishes the EBS driver's attach limit of its type,
	// owned by the Node; the Node carries the driver's zone label.
	csiNode := &storagev1.CSINode{}
	eventually(t, "the CSINode", func(ctx context.Context) (bool, error) {
		return true, env.Client.Get(ctx, client.ObjectKey{Name: name}, csiNode)
	})
	if d := csiNode.Spec.Drivers; len(d) != 1 || d[0].Name != volumes.EBSDriver || d[0].Allocatable == nil || int64(*d[0].Allocatable.Count) != fakeEBSAttachLimit ||
		len(csiNode.OwnerReferences) != 1 || csiNode.OwnerReferences[0].UID != node.UID {
		t.Errorf("CSINode = %+v, want the EBS driver with %d attachments, owned by the Node", csiNode, fakeEBSAttachLimit)
	}
	if zone := node.Labels[volumes.EBSZoneLabel]; zone == "" || zone != node.Labels[corev1.LabelTopologyZone] {
		t.Errorf("the Node's EBS zone label is %q, its zone %q", zone, node.Labels[corev1.LabelTopologyZone])
	}
	lease := &coordinationv1.Lease{}
	getLease := func(ctx context.Context) error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: name}, lease)
	}
	eventually(t, "the Lease", func(ctx context.Context) (bool, error) {
		err := getLease(ctx)
		return err == nil && *lease.Spec.HolderIdentity == name && lease.Spec.RenewTime != nil, err
	})
	firstRenewal := lease.Spec.RenewTime.Time
	eventually(t, "a Lease renewal", func(ctx context.Context) (bool, error) {
		err := getLease(ctx)
		return err == nil && lease.Spec.RenewTime.After(firstRenewal), err
	})

	// The images a pod asks for land on the disk one after the other, and the kubelet
	// lists them, by digest and by tag, as it does.
	images := []string{"registry.example/app:1", "registry.example/sidecar:1"}
	if _, ok := c.PullImages(name, 1, clk.Now(), images); !ok {
		t.Fatal("the Ready kubelet refused to pull")
	}
	clk.Step(p.ImagePullDelay)
	nodeIs("one image", func() bool { return len(node.Status.Images) == 1 })
	clk.Step(p.ImagePullDelay)
	nodeIs("both images", func() bool { return len(node.Status.Images) == 2 })
	for n, image := range images {
		if got, want := node.Status.Images[n].Names, []string{digestOf(image), image}; !slices.Equal(got, want) {
			t.Errorf("image %d names %v, want %v", n, got, want)
		}
	}

	// Stop: graceful shutdown. Start: Ready again.
	if err := act(t, plainStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	nodeIs("the Node shutting down", func() bool { return ready(node).Message == messageShuttingDown })
	if r := ready(node); r.Status != corev1.ConditionFalse || r.Reason != "KubeletNotReady" {
		t.Errorf("Ready when stopping = %+v", r)
	}
	clk.Step(p.StopDelay)
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.StartDelay)
	nodeIs("the Node registered again", func() bool { return ready(node).Message == messageNetworkNotReady })
	clk.Step(p.ResumeDelay)
	nodeIs("the Node Ready again", func() bool { return ready(node).Status == corev1.ConditionTrue })
	if node.Labels["example.com/added"] != "by-stratos" || !hasTaint(node, added) || len(node.Status.Images) != 2 {
		t.Errorf("after a restart: labels %v, taints %v, %d images", node.Labels, node.Spec.Taints, len(node.Status.Images))
	}

	// The instance that never registers has no Node, although it would have registered
	// in the same sync as the other.
	if n := countNodes(t, env.Client, lost.ProviderID); n != 0 {
		t.Errorf("the instance that never registers has %d Nodes", n)
	}
}

func checkRegistration(t *testing.T, node *corev1.Node, inst *cloudprovider.Instance, it *cloudprovider.InstanceType, req *cloudprovider.CreateRequest) {
	t.Helper()
	if node.Spec.ProviderID != inst.ProviderID {
		t.Errorf("providerID = %q, want %q", node.Spec.ProviderID, inst.ProviderID)
	}
	for key, want := range map[string]string{
		corev1.LabelHostname:           node.Name,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         inst.Architecture,
		corev1.LabelInstanceTypeStable: inst.Type,
		corev1.LabelTopologyZone:       inst.Zone,
		corev1.LabelTopologyRegion:     fakecloud.DefaultRegion,
		v1beta1.LabelCapacityType:      inst.CapacityType,
		v1beta1.LabelNodePool:          "web",
	} {
		if got := node.Labels[key]; got != want {
			t.Errorf("label %s = %q, want %q", key, got, want)
		}
	}
	// The API server's TaintNodesByCondition admission adds a not-ready taint of its own.
	if !hasTaint(node, req.Taints[0]) {
		t.Errorf("taints = %v", node.Spec.Taints)
	}
	if !equality.Semantic.DeepEqual(node.Status.Capacity, it.Capacity) || !equality.Semantic.DeepEqual(node.Status.Allocatable, it.Allocatable()) {
		t.Errorf("capacity %v, allocatable %v; want those of %s", node.Status.Capacity, node.Status.Allocatable, it.Name)
	}
	if info := node.Status.NodeInfo; info.KubeletVersion != "v1.37.0" || info.Architecture != inst.Architecture || info.OperatingSystem != "linux" {
		t.Errorf("nodeInfo = %+v", info)
	}
	if len(node.Status.Addresses) != 2 {
		t.Errorf("addresses = %v", node.Status.Addresses)
	}
}

func countNodes(t *testing.T, c client.Client, providerID string) int {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := c.List(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, node := range nodes.Items {
		if node.Spec.ProviderID == providerID {
			n++
		}
	}
	return n
}

func hasTaint(node *corev1.Node, taint corev1.Taint) bool {
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&taint) {
			return true
		}
	}
	return false
}

func condition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for n := range node.Status.Conditions {
		if node.Status.Conditions[n].Type == t {
			return &node.Status.Conditions[n]
		}
	}
	return nil
}

// ready returns the Ready condition, or an empty one before the first status.
func ready(node *corev1.Node) *corev1.NodeCondition {
	if r := condition(node, corev1.NodeReady); r != nil {
		return r
	}
	return &corev1.NodeCondition{}
}

// digestOf is the digest reference the contract gives an image: its name without the tag,
// @sha256: and the hex SHA-256 of the whole reference.
func digestOf(image string) string {
	name := image
	if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") {
		name = image[:colon]
	}
	return fmt.Sprintf("%s@sha256:%x", name, sha256.Sum256([]byte(image)))
}
