package provisioning_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/volumes"
	"github.com/stratos-sh/stratos/test/stack"
)

// inZone pins a pod to a zone.
func inZone(zone string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: zone} }
}

// runningNodeIn launches a node for a pod pinned to zone and waits until it runs.
func runningNodeIn(f *stack.Fixture, pool, zone string) v1beta1.NodeClaim {
	f.T.Helper()
	pendingPods(f, "default", "in-"+zone, 1, "500m", "512Mi", inZone(zone))
	running := f.WaitForPhase(pool, 1, v1beta1.PhaseRunning)
	if running[0].Status.Zone != zone {
		f.T.Fatalf("the node for a pod pinned to %s is in %s", zone, running[0].Status.Zone)
	}
	return running[0]
}

// zoneOf is the zone a claim asks for, or "" when it may go to any.
func zoneOf(c v1beta1.NodeClaim) []string {
	for _, r := range c.Spec.Requirements {
		if r.Key == corev1.LabelTopologyZone {
			return r.Values
		}
	}
	return nil
}

// A pod whose volume is in fake-1a is not placed on the running node in fake-1b that has
// room for it, as kube-scheduler would not place it there: a claim pinned to fake-1a is
// launched for it.
func TestAZonalVolumesPodGetsANodeInItsZone(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("data", 0, nil)
	runningNodeIn(f, "data", "fake-1b")

	pendingPods(f, "default", "db", 1, "500m", "512Mi", f.ZonalClaim("db-0", "fake-1a"))
	f.Eventually("a claim is launched for the pod", func() bool { return len(claimsAskedToRun(f, "data")) == 2 })
	for _, c := range claimsAskedToRun(f, "data") {
		if c.Status.Zone == "fake-1b" {
			continue
		}
		if zones := zoneOf(c); !slices.Equal(zones, []string{"fake-1a"}) {
			t.Fatalf("the claim launched for the pod may go to zones %v, want only fake-1a, its volume's", zones)
		}
	}
}

// A pod whose claim is not bound and binds at once waits without a launch, with an
// Event saying why; once the claim is bound to a volume in fake-1c, the pod gets a node
// there: the binding alone wakes provisioning.
func TestAPodWaitsForItsClaimToBindThenGetsANode(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Opts.Provisioning = provisioning.Options{Resync: time.Hour} // only a change may wake it
	f.RestartOperator(f.Opts)
	f.Pool("data", 0, nil)
	immediate := storagev1.VolumeBindingImmediate
	f.Create(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: volumes.EBSDriver, VolumeBindingMode: &immediate})
	claim := f.VolumeClaim("logs", "gp3", "")
	pod := pendingPods(f, "default", "logger", 1, "500m", "512Mi", stack.Mounting("logs"))[0]

	f.Eventually("the pod has a WaitingForVolumes Event", func() bool {
		notes := eventNotes(f, pod.Name, provisioning.ReasonWaitingForVolumes)
		return len(notes) > 0 && strings.Contains(notes[0], "binds at once")
	})
	if n := len(f.Claims("data")); n != 0 {
		t.Fatalf("%d claims launched for a pod whose claim is not bound", n)
	}

	f.Volume("logs", "gp3", volumes.EBSZoneLabel, "fake-1c")
	stack.Patch(f, claim, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv-logs" })
	f.Eventually("a claim pinned to fake-1c is launched", func() bool {
		claims := claimsAskedToRun(f, "data")
		return len(claims) == 1 && slices.Equal(zoneOf(claims[0]), []string{"fake-1c"})
	})
}

// A node takes no more volumes of a driver than its CSINode allows: with its one
// attachment taken by a running pod, a pod with a volume of its own gets a new node,
// while a pod without a volume fits there.
func TestANodeTakesNoMoreVolumesThanItsCSINodeAllows(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Opts.Provisioning = provisioning.Options{Resync: time.Hour}
	f.RestartOperator(f.Opts)
	f.Pool("data", 0, nil)
	node := runningNodeIn(f, "data", "fake-1a")
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node.Status.NodeName}}
	f.Eventually("the kubelet publishes the Node's CSINode", func() bool {
		return f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(csiNode), csiNode) == nil
	})
	stack.Patch(f, csiNode, func(c *storagev1.CSINode) { c.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](1) })

	first := newPod("default", "first", "100m", "64Mi")
	f.ZonalClaim("first", "fake-1a")(first)
	first.Spec.NodeName = node.Status.NodeName
	f.Create(first)

	pendingPods(f, "default", "second", 1, "100m", "64Mi", f.ZonalClaim("second", "fake-1a"))
	f.Eventually("a second node is launched for the pod with a second volume", func() bool { return len(claimsAskedToRun(f, "data")) == 2 })
}
