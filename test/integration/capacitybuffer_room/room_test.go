package capacitybuffer_room_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

const (
	active  = "buffer.x-k8s.io/active-capacity"
	standby = "stratos.sh/standby-capacity"
)

// An active buffer of two 1-CPU pods launches a node for its room with no pod pending.
// A burst of five real pods is decided before the buffer: three take the buffer's node
// (no launch for them), two get a node launched for them, none waits while the buffer
// holds room; then the buffer launches a node again. Passes after that launch nothing.
func TestAnActiveBufferKeepsRoomThatRealPodsTakeFirst(t *testing.T) {
	t.Parallel()
	f := stack.NewSerialFixtureWith(t, fakecloud.Options{}, func(o *stack.OperatorOptions) {
		// The burst's pods are created and marked one by one; a wide window decides on
		// all of them at once, which is what the test checks.
		o.Provisioning = provisioning.Options{BatchIdle: time.Second, BatchMax: 5 * time.Second}
	})
	xlargeClass(f)
	f.Pool("web", 0, onXlarge)
	newBuffer(f, "room", active, 2, "1", nil)

	kept := waitForProvisioning(f, "room", metav1.ConditionTrue, "RoomKept")
	if !strings.Contains(kept.Message, "NodePool web") {
		t.Errorf("Provisioning message %q does not name the pool", kept.Message)
	}
	f.Eventually("a claim is launched for the buffer", func() bool { return len(bufferClaims(f, "web", "room")) == 1 })
	first := f.WaitForClaim(bufferClaims(f, "web", "room")[0].Name, v1beta1.PhaseRunning)
	if n := len(runningClaims(f, "web")); n != 1 {
		t.Fatalf("%d claims run for a buffer of two 1-CPU pods, want 1", n)
	}
	if !slices.Contains(eventReasons(f, "CapacityBuffer", "room"), "RoomKept") {
		t.Error("no RoomKept Event on the buffer")
	}

	pods := pendingPods(f, "burst", 5, "1")
	f.Eventually("the buffer launched a second node, after the burst", func() bool { return len(bufferClaims(f, "web", "room")) == 2 })
	var onClaims []*corev1.Pod
	f.Eventually("two of the burst's pods are placed on a claim", func() bool {
		onClaims = nil
		for _, pod := range pods {
			if placedOn(f, pod) != "" {
				onClaims = append(onClaims, pod)
			}
		}
		return len(onClaims) == 2
	})
	launchedForPods := placedOn(f, onClaims[0])
	if claim := f.Claim(launchedForPods); claim.Annotations[annotationBuffer] != "" {
		t.Errorf("the burst's pods went to claim %s, made for buffer %s", claim.Name, claim.Annotations[annotationBuffer])
	}
	if n := len(runningClaims(f, "web")); n != 3 {
		t.Fatalf("%d claims run, want 3: the buffer's first, one for two pods of the burst, the buffer's second", n)
	}
	for _, pod := range pods {
		if slices.Contains(eventReasons(f, "Pod", pod.Name), provisioning.ReasonNoPoolFits) {
			t.Errorf("pod %s of the burst was left without room", pod.Name)
		}
	}

	// Kube-scheduler binds the burst: three pods on the buffer's first node, two on the
	// node launched for them.
	for _, pod := range pods {
		if !slices.Contains(onClaims, pod) {
			bind(f, pod, first.Status.NodeName)
		}
	}
	forPods := f.WaitForClaim(launchedForPods, v1beta1.PhaseRunning)
	for _, pod := range onClaims {
		bind(f, pod, forPods.Status.NodeName)
	}
	anotherPass(f, "room", metav1.ConditionTrue, "RoomKept")
	anotherPass(f, "room", metav1.ConditionTrue, "RoomKept")
	if n, m := len(runningClaims(f, "web")), len(bufferClaims(f, "web", "room")); n != 3 || m != 2 {
		t.Errorf("after more passes %d claims run, %d for the buffer; want still 3 and 2", n, m)
	}
}

// A standby-capacity buffer of five 1-CPU pods (three to a node) raises the warm pool by
// two standby nodes and runs none; deleted, the warm pool goes back to its minimum.
func TestAStandbyBufferRaisesTheWarmPool(t *testing.T) {
	f := stack.NewFixture(t, nil)
	xlargeClass(f)
	f.Pool("warm", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "xlarge" })
	f.WaitForPhase("warm", 1, v1beta1.PhaseStandby)
	b := newBuffer(f, "spare", standby, 5, "1", nil)

	kept := waitForProvisioning(f, "spare", metav1.ConditionTrue, "RoomKept")
	if !strings.Contains(kept.Message, "2 standby nodes of NodePool warm") {
		t.Errorf("Provisioning message %q does not say the buffer needs two standby nodes of the pool", kept.Message)
	}
	f.WaitForPhase("warm", 3, v1beta1.PhaseStandby)
	pool := &v1beta1.NodePool{}
	f.Eventually("the pool's standby target is 3", func() bool {
		return f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: "warm"}, pool) == nil && pool.Status.StandbyTarget == 3
	})
	anotherPass(f, "spare", metav1.ConditionTrue, "RoomKept")
	if n := len(runningClaims(f, "warm")); n != 0 {
		t.Errorf("%d claims asked to run for a standby-capacity buffer, want 0", n)
	}
	if n := len(f.Claims("warm")); n != 3 {
		t.Errorf("%d claims, want 3 standing by", n)
	}

	if err := f.Env.Client.Delete(f.Ctx, b); err != nil {
		t.Fatal(err)
	}
	f.WaitForPhase("warm", 1, v1beta1.PhaseStandby)
}

// An active buffer's node is empty, and stays while the buffer needs its room: an idle
// node of another pool, started after it with the same consolidateAfter, is given back
// first. Once the buffer is deleted, its node goes too.
func TestConsolidationKeepsTheBuffersRoom(t *testing.T) {
	f := stack.NewFixture(t, nil)
	xlargeClass(f)
	f.Pool("web", 0, onXlarge)
	f.Pool("batch", 1, func(p *v1beta1.NodePool) {
		onXlarge(p)
		p.Spec.Template.Labels["example.com/team"] = "batch"
	})
	b := newBuffer(f, "held", active, 2, "1", func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"example.com/team": "web"} })
	waitForProvisioning(f, "held", metav1.ConditionTrue, "RoomKept")
	f.Eventually("a claim is launched for the buffer", func() bool { return len(bufferClaims(f, "web", "held")) == 1 })
	kept := f.WaitForClaim(bufferClaims(f, "web", "held")[0].Name, v1beta1.PhaseRunning)

	idle := f.WaitForPhase("batch", 1, v1beta1.PhaseStandby)[0]
	f.SetDesired(idle.Name, v1beta1.DesiredRunning)
	f.WaitForClaim(idle.Name, v1beta1.PhaseRunning)
	f.Eventually("the idle node of batch is given back", func() bool { return !askedToRun(f, idle.Name) })
	if !askedToRun(f, kept.Name) || f.Claim(kept.Name).Status.Phase != v1beta1.PhaseRunning {
		t.Fatalf("the buffer's node %s was given back", kept.Name)
	}

	if err := f.Env.Client.Delete(f.Ctx, b); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the buffer's node is given back once the buffer is gone", func() bool { return !askedToRun(f, kept.Name) })
}

// askedToRun says whether the claim exists, is not being deleted and is asked to run.
func askedToRun(f *stack.Fixture, name string) bool {
	f.T.Helper()
	claim := &v1beta1.NodeClaim{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: name}, claim); err != nil {
		if apierrors.IsNotFound(err) {
			return false
		}
		f.T.Fatal(err)
	}
	return claim.DeletionTimestamp.IsZero() && claim.Spec.DesiredState == v1beta1.DesiredRunning
}

// A buffer whose pod fits no pool is Provisioning False NoPoolFits, with an Event, and
// launches nothing, pass after pass.
func TestABufferThatFitsNoPoolLaunchesNothing(t *testing.T) {
	f := stack.NewFixture(t, nil)
	xlargeClass(f)
	f.Pool("web", 0, onXlarge)
	newBuffer(f, "huge", active, 1, "64", nil)

	refused := waitForProvisioning(f, "huge", metav1.ConditionFalse, "NoPoolFits")
	if !strings.Contains(refused.Message, "NodePool web") {
		t.Errorf("Provisioning message %q does not say why pool web refused", refused.Message)
	}
	f.Eventually("a NoPoolFits Event on the buffer", func() bool {
		return slices.Contains(eventReasons(f, "CapacityBuffer", "huge"), "NoPoolFits")
	})
	f.Eventually("the buffer's pod counts as unplaced", func() bool {
		m := stack.Metric(t, "stratos_capacitybuffer_pods", map[string]string{"namespace": "default", "name": "huge", "placement": "unplaced"})
		return m != nil && m.GetGauge().GetValue() == 1
	})
	anotherPass(f, "huge", metav1.ConditionFalse, "NoPoolFits")
	anotherPass(f, "huge", metav1.ConditionFalse, "NoPoolFits")
	if n := len(f.Claims("web")); n != 0 {
		t.Errorf("%d claims for a buffer that fits no pool, want 0", n)
	}
}
