package provisioning_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// The time from the last pod of a 500-pod burst marked Unschedulable to the last launch
// intent written, over several bursts. It is reported, not asserted: CI machines vary.
func TestDecisionLatencyOfA500PodBurst(t *testing.T) {
	f := stack.NewSerialFixture(t, nil)
	// A pool without a warm pool: every intent is a claim creation, which carries the
	// number of pods it is for. Its launches fail, so that the claims keep the size they
	// were made with and later decisions do not fill them further: the pods of the
	// claims then add up to the burst.
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "unlaunchable"}, Spec: v1beta1.FakeNodeClassSpec{
		Faults: &v1beta1.FakeFaults{Errors: []v1beta1.FakeOperationFault{{Operation: v1beta1.FakeOperationCreate, Percent: 100}}},
	}})
	f.Pool("burst", 0, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "unlaunchable" })
	const rounds, burst = 5, 500
	var latencies []time.Duration
	var passes []uint64
	var widestGap time.Duration
	for round := range rounds {
		namespace := fmt.Sprintf("burst-%d", round)
		f.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
		// The pods are made before the measured part, eight requests at a time: one by one,
		// 2,500 creations took minutes of a loaded machine.
		pods := make([]*corev1.Pod, burst)
		errs := make([]error, burst)
		workqueue.ParallelizeUntil(f.Ctx, 8, burst, func(i int) {
			pods[i] = newPod(namespace, fmt.Sprintf("p-%d", i), "100m", "128Mi")
			errs[i] = f.Env.Client.Create(f.Ctx, pods[i])
		})
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		before := decisions(t)
		var lastMark time.Time
		for _, pod := range pods {
			f.MarkUnschedulable(pod)
			if now := time.Now(); !lastMark.IsZero() {
				widestGap = max(widestGap, now.Sub(lastMark))
			}
			lastMark = time.Now()
		}
		f.Eventually("every pod of the burst has a claim", func() bool { return podsLaunchedFor(f, "burst") == burst })
		latencies = append(latencies, f.Op.Writes.Last("create NodeClaim").Sub(lastMark))
		passes = append(passes, decisions(t)-before)

		// One request each, eight at a time: one DeleteAllOf of 500 pods can outlast the
		// API server's request timeout on a loaded machine (seen at load 55).
		workqueue.ParallelizeUntil(f.Ctx, 8, burst, func(i int) {
			errs[i] = client.IgnoreNotFound(f.Env.Client.Delete(f.Ctx, pods[i], client.GracePeriodSeconds(0)))
		})
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		f.Eventually("the round's pods are gone", func() bool {
			pods := &corev1.PodList{}
			if err := f.Env.Client.List(f.Ctx, pods, client.InNamespace(namespace)); err != nil {
				t.Fatal(err)
			}
			return len(pods.Items) == 0
		})
		for _, c := range f.Claims("burst") {
			if err := f.Env.Client.Delete(f.Ctx, &c); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
		}
		f.Eventually("the round's claims are gone", func() bool { return len(f.Claims("burst")) == 0 })
	}
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	t.Logf("last pod marked Unschedulable to last launch intent, %d bursts of %d pods: p50 %s, max (p99) %s; all %v; decisions per burst %v; widest gap between two marks %s",
		rounds, burst, sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), latencies, passes, widestGap.Round(time.Millisecond))
}

// podsLaunchedFor sums the pods the pool's claims asked to run were made for.
func podsLaunchedFor(f *stack.Fixture, pool string) int64 {
	var n int64
	for _, c := range f.Claims(pool) {
		if c.Spec.DesiredState == v1beta1.DesiredRunning && c.DeletionTimestamp.IsZero() {
			n += c.Spec.Resources.Requests.Pods().Value()
		}
	}
	return n
}
