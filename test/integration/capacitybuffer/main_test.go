// Package capacitybuffer_test runs Stratos's controllers against a real API server with
// the CapacityBuffer CRD installed: buffers resolve into the status Cluster Autoscaler
// and Karpenter read as well, follow their workloads, heed their limits, say why they do
// not resolve, and a buffer of another autoscaler's strategy is left alone.
package capacitybuffer_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/stack"
)

// env is the API server the tests share, each in a namespace of its own.
var env *harness.Env

func TestMain(m *testing.M) {
	var err error
	env, err = harness.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// fixture is one test's namespace and the Stratos operator, run as cmd/stratos runs it
// (operator.SetupControllers), on a fake cloud with no pools.
type fixture struct {
	t   *testing.T
	ctx context.Context
	ns  string
	op  *stack.Operator
}

func newFixture(t *testing.T) *fixture {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	// A namespace of its own, named after the test, unique when go test -count repeats it.
	prefix := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(prefix) > 50 {
		prefix = prefix[:50]
	}
	f := &fixture{t: t, ctx: ctx}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.Trim(prefix, "-") + "-"}}
	f.create(namespace)
	f.ns = namespace.Name
	f.op = stack.StartOperator(t, env, fakecloud.New(fakecloud.Options{}), stack.OperatorOptions{})
	return f
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if obj.GetNamespace() == "" && !isNamespace(obj) {
		obj.SetNamespace(f.ns)
	}
	if err := env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func isNamespace(obj client.Object) bool { _, ok := obj.(*corev1.Namespace); return ok }

// buffer reads a buffer.
func (f *fixture) buffer(name string) *autoscalingv1beta1.CapacityBuffer {
	f.t.Helper()
	b := &autoscalingv1beta1.CapacityBuffer{}
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, b); err != nil {
		f.t.Fatal(err)
	}
	return b
}

// condition is a buffer's condition of that type, or nil.
func (f *fixture) condition(name, kind string) *metav1.Condition {
	return meta.FindStatusCondition(f.buffer(name).Status.Conditions, kind)
}

// readyWith reports whether a buffer's ReadyForProvisioning has that status and reason.
func (f *fixture) readyWith(name string, status metav1.ConditionStatus, reason string) bool {
	c := f.condition(name, autoscalingv1beta1.ConditionReadyForProvisioning)
	return c != nil && c.Status == status && c.Reason == reason
}

// replicas is a buffer's status.replicas, -1 when unset.
func (f *fixture) replicas(name string) int32 {
	if r := f.buffer(name).Status.Replicas; r != nil {
		return *r
	}
	return -1
}

// eventually polls cond until it holds, within a minute: far beyond what a pass takes,
// so that a slow machine only waits longer.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		f.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// events are the Events of the test's namespace about the named object with reason.
func (f *fixture) events(name, reason string) []eventsv1.Event {
	f.t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(f.ctx, list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// statusWrites counts the operator's writes to the buffer's status.
func (f *fixture) statusWrites(name string) int {
	return f.op.Writes.ForObject(name)["patch CapacityBuffer/status"] + f.op.Writes.ForObject(name)["update CapacityBuffer/status"]
}

// podSpec is a pod of one container requesting cpu and memory.
func podSpec(image, cpu, memory string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image, Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}}}}
}

func podTemplate(name string, spec corev1.PodSpec) *corev1.PodTemplate {
	return &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: spec}}
}

func deployment(name string, replicas int32, spec corev1.PodSpec) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}}}
}

// templateBuffer is a buffer of a PodTemplate.
func templateBuffer(name, template string, replicas *int32) *autoscalingv1beta1.CapacityBuffer {
	return &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: template}, Replicas: replicas}}
}

// workloadBuffer is a buffer of a percentage of an apps workload.
func workloadBuffer(name, kind, workload string, percentage int32) *autoscalingv1beta1.CapacityBuffer {
	return &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: kind, Name: workload}, Percentage: ptr.To(percentage)}}
}
