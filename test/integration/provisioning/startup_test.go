package provisioning_test

import (
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// bind binds a pod to a Node, as kube-scheduler would; nothing runs kube-scheduler here.
func bind(f *stack.Fixture, pod *corev1.Pod, node string) {
	f.T.Helper()
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := f.Env.Client.SubResource("binding").Create(f.Ctx, pod, binding); err != nil {
		f.T.Fatalf("binding pod %s to %s: %v", pod.Name, node, err)
	}
}

// startupSeries is a snapshot of one series of the pod startup histogram.
type startupSeries struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64
}

func startupOf(t *testing.T, path, milestone string) startupSeries {
	h := stack.Metric(t, "stratos_pod_startup_duration_seconds", map[string]string{"path": path, "milestone": milestone}).GetHistogram()
	s := startupSeries{count: h.GetSampleCount(), sum: h.GetSampleSum(), buckets: map[float64]uint64{}}
	for _, b := range h.GetBucket() {
		s.buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return s
}

// wantOne checks that between before and after the series gained exactly one
// observation, of seconds: the count, the sum, and every cumulative bucket.
func wantOne(t *testing.T, what string, before, after startupSeries, seconds float64, bounds []*dto.Bucket) {
	t.Helper()
	if n := after.count - before.count; n != 1 {
		t.Errorf("%s: %d observations, want 1", what, n)
		return
	}
	if got := after.sum - before.sum; math.Abs(got-seconds) > 1e-9 {
		t.Errorf("%s: observed %.3fs, want %.3fs from the pod's timestamps", what, got, seconds)
	}
	for _, b := range bounds {
		want := uint64(0)
		if seconds <= b.GetUpperBound() {
			want = 1
		}
		if got := after.buckets[b.GetUpperBound()] - before.buckets[b.GetUpperBound()]; got != want {
			t.Errorf("%s: bucket le=%g gained %d, want %d", what, b.GetUpperBound(), got, want)
		}
	}
}

// expectedStartup works out, from the pod's own status, how long it took from its
// creation until every container ran and until it was Ready.
func expectedStartup(t *testing.T, pod *corev1.Pod) (running, ready float64) {
	t.Helper()
	var lastStart time.Time
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Running == nil {
			t.Fatalf("pod %s: container %s does not run", pod.Name, s.Name)
		}
		if s.State.Running.StartedAt.After(lastStart) {
			lastStart = s.State.Running.StartedAt.Time
		}
	}
	var readyAt time.Time
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			readyAt = c.LastTransitionTime.Time
		}
	}
	if lastStart.IsZero() || readyAt.IsZero() {
		t.Fatalf("pod %s is not running and Ready: %+v", pod.Name, pod.Status)
	}
	created := pod.CreationTimestamp.Time
	return lastStart.Sub(created).Seconds(), readyAt.Sub(created).Seconds()
}

// Three pods, each served another way: one by a node started from standby for it, one
// by a node launched for it, one by the started node once it runs. The pod startup
// histogram holds one observation per pod and milestone, under the pod's path, of the
// time between the pod's creation and its containers' last start, and its Ready
// transition, as the pods' own timestamps tell.
func TestPodStartupIsMeasuredByPathFromThePodsTimestamps(t *testing.T) {
	f := stack.NewSerialFixture(t, nil)
	for _, team := range []string{"warm", "cold"} {
		min := int32(1)
		if team == "cold" {
			min = 0
		}
		f.Pool("startup-"+team, min, func(p *v1beta1.NodePool) {
			p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": v1beta1.LabelValue(team)}
		})
	}
	standby := f.WaitForPhase("startup-warm", 1, v1beta1.PhaseStandby)[0]
	selecting := func(team string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"example.com/team": team} }
	}
	paths := []string{"standby", "cold", "existing"}
	before := map[string]map[string]startupSeries{}
	for _, path := range paths {
		before[path] = map[string]startupSeries{"running": startupOf(t, path, "running"), "ready": startupOf(t, path, "ready")}
	}
	decided := func(outcome string) float64 {
		return stack.Counter(t, "stratos_provisioning_decisions_total", map[string]string{"outcome": outcome})
	}
	starts, launches := decided("start"), decided("launch")

	// The standby node starts for the first pod, and then a node launches for the second.
	warmPod := pendingPods(f, "default", "startup-warm", 1, "100m", "128Mi", selecting("warm"))[0]
	f.Eventually("the standby node is asked to run", func() bool { return len(claimsAskedToRun(f, "startup-warm")) == 1 })
	coldPod := pendingPods(f, "default", "startup-cold", 1, "100m", "128Mi", selecting("cold"))[0]
	started := f.WaitForClaim(standby.Name, v1beta1.PhaseRunning)
	f.Eventually("a claim of the cold pool is launched", func() bool { return len(f.Claims("startup-cold")) == 1 })
	launched := f.WaitForClaim(f.Claims("startup-cold")[0].Name, v1beta1.PhaseRunning)
	bind(f, warmPod, started.Status.NodeName)
	bind(f, coldPod, launched.Status.NodeName)
	if n := decided("start") - starts; n < 1 {
		t.Errorf("%v decisions counted as start, want at least 1", n)
	}
	if n := decided("launch") - launches; n < 1 {
		t.Errorf("%v decisions counted as launch, want at least 1", n)
	}

	// Once the started node has taken its pod, the third pod fits on it as it is.
	f.Eventually("the started node's reservation is lifted", func() bool {
		for _, taint := range f.Node(started.Status.NodeName).Spec.Taints {
			if taint.Key == v1beta1.TaintReservedKey {
				return false
			}
		}
		return true
	})
	existing := decided("existing")
	existingPod := pendingPods(f, "default", "startup-existing", 1, "100m", "128Mi", selecting("warm"))[0]
	f.Eventually("provisioning finds the third pod room on the running node", func() bool { return decided("existing") > existing })
	bind(f, existingPod, started.Status.NodeName)

	// The scenario is what the test means it to be, by the claims' and Nodes' own
	// timestamps: the start came after the first pod, the launched Node registered after
	// the second, and the third came after both.
	pods := map[string]*corev1.Pod{"standby": warmPod, "cold": coldPod, "existing": existingPod}
	for path, pod := range pods {
		key := client.ObjectKeyFromObject(pod)
		f.Eventually("pod "+pod.Name+" runs and is Ready", func() bool {
			if err := f.Env.Client.Get(f.Ctx, key, pod); err != nil {
				t.Fatal(err)
			}
			return pod.Status.Phase == corev1.PodRunning && meta.IsStatusConditionTrue(podConditions(pod), string(corev1.PodReady))
		})
		pods[path] = pod
	}
	startedAt := meta.FindStatusCondition(f.Claim(started.Name).Status.Conditions, v1beta1.ConditionStarted).LastTransitionTime.Time
	if startedAt.Before(warmPod.CreationTimestamp.Time) {
		t.Fatalf("the standby node started at %v, before its pod was created at %v", startedAt, warmPod.CreationTimestamp)
	}
	if registered := f.Node(launched.Status.NodeName).CreationTimestamp.Time; registered.Before(coldPod.CreationTimestamp.Time) {
		t.Fatalf("the launched Node registered at %v, before its pod was created at %v", registered, coldPod.CreationTimestamp)
	}
	if !existingPod.CreationTimestamp.After(startedAt) {
		t.Fatalf("the third pod was created at %v, not after the start at %v", existingPod.CreationTimestamp, startedAt)
	}

	f.Eventually("every milestone of the three pods is observed", func() bool {
		for _, path := range paths {
			for _, milestone := range []string{"running", "ready"} {
				if startupOf(t, path, milestone).count == before[path][milestone].count {
					return false
				}
			}
		}
		return true
	})
	bounds := stack.Metric(t, "stratos_pod_startup_duration_seconds", nil).GetHistogram().GetBucket()
	for _, path := range paths {
		running, ready := expectedStartup(t, pods[path])
		t.Logf("%s: running after %.0fs, Ready after %.0fs", path, running, ready)
		wantOne(t, path+" running", before[path]["running"], startupOf(t, path, "running"), running, bounds)
		wantOne(t, path+" ready", before[path]["ready"], startupOf(t, path, "ready"), ready, bounds)
	}
}

// podConditions are a pod's conditions as metav1 conditions, for the meta helpers.
func podConditions(pod *corev1.Pod) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range pod.Status.Conditions {
		out = append(out, metav1.Condition{Type: string(c.Type), Status: metav1.ConditionStatus(c.Status)})
	}
	return out
}
