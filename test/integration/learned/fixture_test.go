// Package learned_test runs learned warm pools (spec.standby.learned) against a real
// kube-apiserver and the fake cloud, with a fake calendar the tests move across the
// intervals of the day.
package learned_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/test/stack"
)

var berlin, _ = time.LoadLocation("Europe/Berlin")

// tuesday is a Tuesday in Berlin at hh:mm.
func tuesday(hh, mm int) time.Time { return time.Date(2026, 11, 24, hh, mm, 0, 0, berlin) }

// withCalendar runs the fixture's operator with a fake calendar set to at.
func withCalendar(t *testing.T, at time.Time) (*stack.Fixture, *clocktesting.FakePassiveClock) {
	f := stack.NewFixture(t, nil)
	calendar := clocktesting.NewFakePassiveClock(at)
	f.Opts.Calendar = calendar
	f.RestartOperator(f.Opts)
	return f, calendar
}

// moveTo sets the calendar and touches the pool, so that it is looked at now rather
// than when its requeue, timed on the real clock, comes.
func moveTo(f *stack.Fixture, calendar *clocktesting.FakePassiveClock, pool string, at time.Time) {
	f.T.Helper()
	calendar.SetTime(at)
	stack.Patch(f, &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}}, func(p *v1beta1.NodePool) {
		p.Annotations = map[string]string{"example.com/poke": at.String()}
	})
}

// learnedPool creates a pool of c6g.large on-demand nodes (2 CPUs: one 1500m pod each)
// whose warm pool is learned in Berlin time, with standby.min min; tune adjusts it.
func learnedPool(f *stack.Fixture, name string, min int32, tune func(*v1beta1.NodePool)) *v1beta1.NodePool {
	f.T.Helper()
	f.Pool(name, min, func(p *v1beta1.NodePool) {
		p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": v1beta1.LabelValue(name)}
		p.Spec.Template.Spec.Requirements = append(p.Spec.Template.Spec.Requirements,
			v1beta1.NodeSelectorRequirement{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"c6g.large"}},
			v1beta1.NodeSelectorRequirement{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}})
		p.Spec.Standby.Learned = &v1beta1.LearnedStandby{TimeZone: "Europe/Berlin"}
		if tune != nil {
			tune(p)
		}
	})
	return pool(f, name)
}

func pool(f *stack.Fixture, name string) *v1beta1.NodePool {
	f.T.Helper()
	p := &v1beta1.NodePool{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: name}, p); err != nil {
		f.T.Fatal(err)
	}
	return p
}

func learned(f *stack.Fixture, name string) v1beta1.LearnedStatus {
	f.T.Helper()
	if l := pool(f, name).Status.Learned; l != nil {
		return *l
	}
	return v1beta1.LearnedStatus{}
}

// seedHistory writes the pool's NodePoolDemand, owned by it, as the recorder would have:
// nodes at 09:00-09:15 (interval 36 of 15 minutes) in zone fake-1a on each day from
// first to last.
func seedHistory(f *stack.Fixture, p *v1beta1.NodePool, first, last time.Time, nodes int32) {
	f.T.Helper()
	d := &v1beta1.NodePoolDemand{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Spec: v1beta1.NodePoolDemandSpec{
		Interval: v1beta1.Duration{Duration: 15 * time.Minute}, TimeZone: "Europe/Berlin", Since: first.Format("2006-01-02"),
	}}
	for day := first; !day.After(last); day = day.AddDate(0, 0, 1) {
		d.Spec.Days = append(d.Spec.Days, v1beta1.DemandDay{Date: day.Format("2006-01-02"), Zones: []v1beta1.ZoneDemand{
			{Zone: "fake-1a", Intervals: []v1beta1.IntervalDemand{{Index: 36, Nodes: nodes}}},
		}})
	}
	if err := controllerutil.SetControllerReference(p, d, f.Env.Scheme); err != nil {
		f.T.Fatal(err)
	}
	f.Create(d)
}

// recordedAt sums the nodes the pool's NodePoolDemand holds for the date and interval
// over the zones; -1 when it has none.
func recordedAt(f *stack.Fixture, pool, date string, index int32) int32 {
	f.T.Helper()
	demand := &v1beta1.NodePoolDemand{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: pool}, demand); err != nil {
		return -1
	}
	total := int32(0)
	for _, d := range demand.Spec.Days {
		for _, z := range d.Zones {
			for _, iv := range z.Intervals {
				if d.Date == date && iv.Index == index {
					total += iv.Nodes
				}
			}
		}
	}
	return total
}

// boundPod creates a pod bound to node, as kube-scheduler would have bound it.
func boundPod(f *stack.Fixture, pool string, i int, node string) {
	f.T.Helper()
	f.Create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-peak-%d", pool, i), Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:    node,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
		},
	})
}

// demandCounted sums stratos_nodepool_demand_nodes over the pool's zones.
func demandCounted(t *testing.T, pool string) float64 {
	t.Helper()
	registry := prometheus.NewRegistry()
	registry.MustRegister(metrics.PoolDemandNodes)
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, family := range families {
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "nodepool" && label.GetValue() == pool {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// eventNotes lists the notes of the Events about the named object with reason, oldest
// first.
func eventNotes(f *stack.Fixture, name, reason string) []string {
	f.T.Helper()
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	slices.SortFunc(events.Items, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var notes []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// standby counts the pool's claims standing by and meant to.
func standby(f *stack.Fixture, name string) int {
	n := 0
	for _, c := range f.Claims(name) {
		if c.Spec.DesiredState == v1beta1.DesiredStandby && c.Status.Phase == v1beta1.PhaseStandby && c.DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

// pendingPods creates n pods of 1500m for the pool's nodes and marks them Unschedulable,
// as kube-scheduler would (nothing runs it here).
func pendingPods(f *stack.Fixture, pool string, n int) []*corev1.Pod {
	f.T.Helper()
	out := make([]*corev1.Pod, n)
	for i := range out {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", pool, i), Namespace: "default"},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"example.com/team": pool},
				Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				}}},
			},
		}
		f.Create(pod)
		f.MarkUnschedulable(pod)
		out[i] = pod
	}
	return out
}
