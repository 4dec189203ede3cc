package warmpool_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/stack"
)

// stopGuard is the cloud, looking at each stop for the pre-pull pods of the instances
// stopped: the lifecycle controller must have removed them before, as a pod left on a
// stopped node stays there terminating.
type stopGuard struct {
	cloudprovider.API
	c client.Client

	mu      sync.Mutex
	stopped []string
	// left names the pre-pull pods found at a stop of their claim's instance.
	left []string
}

func (g *stopGuard) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	pods := &corev1.PodList{}
	err := g.c.List(ctx, pods, client.HasLabels{v1beta1.LabelPrePull})
	g.mu.Lock()
	if err != nil {
		g.left = append(g.left, "listing pods: "+err.Error())
	}
	for _, pod := range pods.Items {
		claim := &v1beta1.NodeClaim{}
		if err := g.c.Get(ctx, client.ObjectKey{Name: pod.Labels[v1beta1.LabelPrePull]}, claim); err == nil && slices.Contains(ids, claim.Status.InstanceID) {
			g.left = append(g.left, fmt.Sprintf("%s/%s at the stop of %s", pod.Namespace, pod.Name, claim.Status.InstanceID))
		}
	}
	g.stopped = append(g.stopped, ids...)
	g.mu.Unlock()
	return g.API.StopInstances(ctx, ids, hibernate)
}

// check fails the test if a stop found a pre-pull pod, or if instance was never stopped.
func (g *stopGuard) check(t *testing.T, instance string) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.left) > 0 {
		t.Errorf("pre-pull pods were left on stopping nodes: %v", g.left)
	}
	if !slices.Contains(g.stopped, instance) {
		t.Errorf("instance %s was never stopped (stopped: %v)", instance, g.stopped)
	}
}

// guardStops restarts the operator on a cloud that checks each stop for pre-pull pods.
func (f *fixture) guardStops() *stopGuard {
	g := &stopGuard{API: f.Cloud, c: f.Env.Client}
	f.Op.Stop()
	f.Op = stack.StartOperator(f.T, f.Env, g, f.Opts)
	return g
}

// prePullRecorder keeps every version of the pre-pull pods the API server stores, in
// order, from the time it is made: a pod that lives a fraction of a second is seen too.
type prePullRecorder struct {
	mu   sync.Mutex
	seen map[string][]corev1.Pod
}

func (f *fixture) recordPrePulls() *prePullRecorder {
	f.T.Helper()
	watcher, err := client.NewWithWatch(f.Env.Config, client.Options{Scheme: f.Env.Scheme})
	if err != nil {
		f.T.Fatal(err)
	}
	w, err := watcher.Watch(f.Ctx, &corev1.PodList{}, client.HasLabels{v1beta1.LabelPrePull})
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(w.Stop)
	r := &prePullRecorder{seen: map[string][]corev1.Pod{}}
	go func() {
		for event := range w.ResultChan() {
			if pod, ok := event.Object.(*corev1.Pod); ok {
				r.mu.Lock()
				r.seen[pod.Name] = append(r.seen[pod.Name], *pod)
				r.mu.Unlock()
			}
		}
	}()
	return r
}

// versions returns the versions of the named pod seen so far.
func (r *prePullRecorder) versions(name string) []corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen[name])
}

// expectedImageID is the ID the kubelet simulators report for an image: the reference
// without its tag, and the SHA-256 of the whole reference as its digest.
func expectedImageID(image string) string {
	sum := sha256.Sum256([]byte(image))
	repository := image
	if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") {
		repository = image[:colon]
	}
	return repository + "@sha256:" + hex.EncodeToString(sum[:])
}

func (f *fixture) prePullGone(claim string) bool {
	err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Namespace: stack.PrePullNamespace, Name: "prepull-" + claim}, &corev1.Pod{})
	return apierrors.IsNotFound(err)
}

func warmedUpOf(claim *v1beta1.NodeClaim) *metav1.Condition {
	return meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionWarmedUp)
}

// A warming node pulls its pool's images through a pod pinned to it: the pod has the
// shape the contract gives, the Node reports the images, the claim records their IDs,
// and the pod is gone before the instance stops.
func TestWarmupPullsImagesThroughAPrePullPod(t *testing.T) {
	f := newFixture(t, nil)
	guard := f.guardStops()
	pods := f.recordPrePulls()
	images := []string{"registry.example/app:1", "registry.example/sidecar:2"}
	f.Pool("pulled", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Warmup.Images = images })

	claim := f.WaitForPhase("pulled", 1, v1beta1.PhaseStandby)[0]
	f.assertStandby(&claim)
	guard.check(t, claim.Status.InstanceID)

	versions := pods.versions("prepull-" + claim.Name)
	if len(versions) == 0 {
		t.Fatal("no pre-pull pod was seen")
	}
	pod := versions[0]
	if pod.Namespace != stack.PrePullNamespace || pod.Labels[v1beta1.LabelPrePull] != claim.Name || pod.Spec.NodeName != claim.Status.NodeName {
		t.Errorf("pod %s/%s, labels %v, on %q; want it in %s, labelled with and pinned to the claim's Node %s",
			pod.Namespace, pod.Name, pod.Labels, pod.Spec.NodeName, stack.PrePullNamespace, claim.Status.NodeName)
	}
	if owner := metav1.GetControllerOf(&pod); owner == nil || owner.Kind != "NodeClaim" || owner.Name != claim.Name || owner.UID != claim.UID {
		t.Errorf("pod's controller %+v, want the claim", owner)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || len(pod.Spec.Tolerations) != 1 || pod.Spec.Tolerations[0].Operator != corev1.TolerationOpExists || pod.Spec.Tolerations[0].Key != "" {
		t.Errorf("restartPolicy %s, tolerations %+v; want Never and one toleration of every taint", pod.Spec.RestartPolicy, pod.Spec.Tolerations)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken || pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks {
		t.Error("the pod mounts a service account token or gets service links")
	}
	if len(pod.Spec.Containers) != len(images) {
		t.Fatalf("%d containers for %d images", len(pod.Spec.Containers), len(images))
	}
	for n, c := range pod.Spec.Containers {
		if c.Name != fmt.Sprintf("pull-%d", n) || c.Image != images[n] || c.ImagePullPolicy != corev1.PullIfNotPresent || len(c.Resources.Requests) != 0 {
			t.Errorf("container %d: %s %s %s, requests %v", n, c.Name, c.Image, c.ImagePullPolicy, c.Resources.Requests)
		}
	}
	if !f.prePullGone(claim.Name) {
		t.Error("the pre-pull pod outlived the warmup")
	}

	node := f.Node(claim.Status.NodeName)
	for _, image := range images {
		if !slices.ContainsFunc(node.Status.Images, func(i corev1.ContainerImage) bool { return slices.Contains(i.Names, image) }) {
			t.Errorf("the Node does not report %s: %+v", image, node.Status.Images)
		}
	}
	warmed := warmedUpOf(&claim)
	if warmed == nil || warmed.Status != metav1.ConditionTrue || warmed.Reason != nodeclaim.ReasonWarmedUp {
		t.Fatalf("WarmedUp = %+v, want True", warmed)
	}
	f.WaitForEvent(claim.Name, nodeclaim.ReasonImagesPulled)
	note, ok := f.EventNote(claim.Name, nodeclaim.ReasonImagesPulled)
	if !ok {
		t.Error("no ImagesPulled Event")
	}
	for _, image := range images {
		want := fmt.Sprintf("%s (%s)", image, expectedImageID(image))
		if !strings.Contains(warmed.Message, want) || !strings.Contains(note, want) {
			t.Errorf("WarmedUp's message %q or the Event's %q lacks %s", warmed.Message, note, want)
		}
	}
	f.CheckInvariants()
}

// An image the node cannot pull is reported on the claim, naming it in the kubelet's
// words, with one Warning Event however often the kubelet retries; the warmup timeout
// then stops the node as it is, having removed the pod, and says what was missing. The
// timeout is shortened only once the failure shows, so that a slow machine cannot end
// the warmup before the pull is tried.
func TestAFailingImageIsReportedUntilTheWarmupTimeout(t *testing.T) {
	f := newFixture(t, nil)
	guard := f.guardStops()
	const missing = "registry.example/missing:1"
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "broken-image"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{ImagePullErrors: []string{missing}}}})
	pool := f.Pool("broken", 1, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = "broken-image"
		p.Spec.Standby.Warmup.Images = []string{"registry.example/app:1", missing}
		p.Spec.Standby.Warmup.TimeoutAction = v1beta1.WarmupTimeoutStop
	})

	claim := f.WaitForPhase("broken", 1, v1beta1.PhaseWarmingUp)[0]
	var failed *metav1.Condition
	f.Eventually("the claim reports the failing image", func() bool {
		failed = warmedUpOf(f.Claim(claim.Name))
		return failed != nil && failed.Reason == nodeclaim.ReasonImagePullFailed
	})
	if !strings.Contains(failed.Message, missing) || strings.Contains(failed.Message, "registry.example/app:1") ||
		(!strings.Contains(failed.Message, "ErrImagePull") && !strings.Contains(failed.Message, "ImagePullBackOff")) {
		t.Errorf("ImagePullFailed says %q; want it to name %s alone, with the kubelet's reason", failed.Message, missing)
	}
	// Until a timeout ends it, a failing pull keeps the claim waiting.
	f.consistently("the claim keeps waiting", time.Second, func() bool { return f.Claim(claim.Name).Status.Phase == v1beta1.PhaseWarmingUp })
	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Standby.Warmup.Timeout = v1beta1.NewDuration(time.Second) })

	claim = *f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	f.assertStandby(&claim)
	guard.check(t, claim.Status.InstanceID)
	warnings := 0
	for _, reason := range f.EventReasons(claim.Name) {
		if reason == nodeclaim.ReasonImagePullFailed {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d ImagePullFailed Events, want one", warnings)
	}
	timedOut := warmedUpOf(&claim)
	if timedOut == nil || timedOut.Reason != nodeclaim.ReasonWarmupTimeout || !strings.Contains(timedOut.Message, missing) {
		t.Errorf("WarmedUp = %+v, want WarmupTimeout naming %s", timedOut, missing)
	}
	if !f.prePullGone(claim.Name) {
		t.Error("the pre-pull pod outlived the warmup")
	}
	f.CheckInvariants()
}

// A claim asked to run while its node pulls images runs at once; its pre-pull pod goes.
func TestAClaimAskedToRunWhileWarmingDropsItsPrePullPod(t *testing.T) {
	f := newFixture(t, nil)
	f.slowPullClass()
	f.Pool("hurry", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "slow-pull" })

	warming := f.WaitForPhase("hurry", 1, v1beta1.PhaseWarmingUp)[0]
	f.Eventually("the pre-pull pod is on the Node", func() bool { return !f.prePullGone(warming.Name) })
	f.SetDesired(warming.Name, v1beta1.DesiredRunning)

	f.assertRunning(f.WaitForClaim(warming.Name, v1beta1.PhaseRunning))
	f.Eventually("the pre-pull pod is gone", func() bool { return f.prePullGone(warming.Name) })
	f.CheckInvariants()
}

// The pre-pull pod is made once: a restarted operator keeps the pod its predecessor
// made, and a pool whose images change while the node warms gets it replaced by one
// pulling the new images.
func TestThePrePullPodSurvivesARestartAndFollowsThePool(t *testing.T) {
	f := newFixture(t, nil)
	f.slowPullClass()
	pool := f.Pool("steady", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "slow-pull" })
	claim := f.WaitForPhase("steady", 1, v1beta1.PhaseWarmingUp)[0]
	key := client.ObjectKey{Namespace: stack.PrePullNamespace, Name: "prepull-" + claim.Name}
	first := &corev1.Pod{}
	f.Eventually("the pre-pull pod is on the Node", func() bool { return f.Env.Client.Get(f.Ctx, key, first) == nil })

	f.RestartOperator(f.Opts)
	f.consistently("the restarted operator keeps the pod", 2*time.Second, func() bool {
		pod := &corev1.Pod{}
		return f.Env.Client.Get(f.Ctx, key, pod) == nil && pod.UID == first.UID && pod.DeletionTimestamp.IsZero()
	})

	const changed = "registry.example/app:2"
	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Standby.Warmup.Images = []string{changed} })
	f.Eventually("the pod is replaced by one pulling the pool's new image", func() bool {
		pod := &corev1.Pod{}
		return f.Env.Client.Get(f.Ctx, key, pod) == nil && pod.UID != first.UID &&
			len(pod.Spec.Containers) == 1 && pod.Spec.Containers[0].Image == changed && pod.Spec.NodeName == claim.Status.NodeName
	})
	if got := f.Claim(claim.Name); got.Status.Phase != v1beta1.PhaseWarmingUp {
		t.Fatalf("the claim is %s, want it still warming up", got.Status.Phase)
	}
}

// A pre-pull pod the API server refuses (here, its namespace does not exist) is
// reported on the claim in the API server's words, with a Warning Event; the warmup
// timeout, shortened once the refusal shows, then applies.
func TestARefusedPrePullPodIsReported(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.PrePullNamespace = "absent" })
	pool := f.Pool("refused-pod", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Warmup.TimeoutAction = v1beta1.WarmupTimeoutStop })

	claim := f.WaitForPhase("refused-pod", 1, v1beta1.PhaseWarmingUp)[0]
	f.Eventually("the claim says the pod was refused", func() bool {
		c := warmedUpOf(f.Claim(claim.Name))
		return c != nil && c.Reason == nodeclaim.ReasonPrePullFailed && strings.Contains(c.Message, `namespaces "absent" not found`)
	})
	f.WaitForEvent(claim.Name, nodeclaim.ReasonPrePullFailed)
	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Standby.Warmup.Timeout = v1beta1.NewDuration(time.Second) })

	claim = *f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	if w := warmedUpOf(&claim); w == nil || w.Reason != nodeclaim.ReasonWarmupTimeout {
		t.Errorf("WarmedUp = %+v, want WarmupTimeout", w)
	}
	f.assertStandby(&claim)
	f.CheckInvariants()
}
