// Package capacitybuffer_room_test runs provisioning, the warm pool and disruption
// against a real kube-apiserver with the fake cloud, with CapacityBuffers whose status
// the tests write as the buffer controller would: the room of a buffer's virtual pods
// is kept, refilled and never taken from real pods. Nothing runs kube-scheduler here:
// the tests mark pods Unschedulable and bind them themselves.
package capacitybuffer_room_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// annotationBuffer is the annotation provisioning puts on the claims it starts or
// launches for buffers; written out here so that the tests do not share the code.
const annotationBuffer = "stratos.sh/capacity-buffer"

// xlargeClass launches only m5.xlarge: 4 vCPU, of which 3.92 are allocatable, so that
// three 1-CPU pods fill a node.
func xlargeClass(f *stack.Fixture) {
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "xlarge"}, Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"m5.xlarge"}}})
}

// onXlarge makes a pool launch m5.xlarge and give its empty nodes back after a second.
func onXlarge(p *v1beta1.NodePool) {
	p.Spec.Template.Spec.NodeClassRef.Name = "xlarge"
	p.Spec.Disruption.ConsolidateAfter = &v1beta1.Duration{Duration: time.Second}
}

func requests(cpu string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}
}

// newBuffer creates a PodTemplate of one cpu-sized chunk and a buffer of replicas of
// them with strategy, then writes the buffer's status as the buffer controller does once
// it resolved it: the template, the replicas, and ReadyForProvisioning True.
func newBuffer(f *stack.Fixture, name, strategy string, replicas int32, cpu string, tune func(*corev1.PodSpec)) *autoscalingv1beta1.CapacityBuffer {
	f.T.Helper()
	template := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-chunk", Namespace: "default"},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Resources: requests(cpu)}}},
		},
	}
	if tune != nil {
		tune(&template.Template.Spec)
	}
	f.Create(template)
	b := &autoscalingv1beta1.CapacityBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: autoscalingv1beta1.CapacityBufferSpec{
			ProvisioningStrategy: ptr.To(strategy),
			PodTemplateRef:       &autoscalingv1beta1.LocalObjectRef{Name: template.Name},
			Replicas:             ptr.To(replicas),
		},
	}
	f.Create(b)
	base := b.DeepCopy()
	b.Status.PodTemplateRef = &autoscalingv1beta1.LocalObjectRef{Name: template.Name}
	b.Status.Replicas = ptr.To(replicas)
	b.Status.PodTemplateGeneration = ptr.To(template.Generation)
	b.Status.ProvisioningStrategy = ptr.To(strategy)
	b.Status.Conditions = []metav1.Condition{{
		Type: "ReadyForProvisioning", Status: metav1.ConditionTrue, Reason: "Resolved", Message: "test", LastTransitionTime: metav1.Now(),
	}}
	if err := f.Env.Client.Status().Patch(f.Ctx, b, client.MergeFrom(base)); err != nil {
		f.T.Fatal(err)
	}
	return b
}

// waitForProvisioning waits until the buffer's Provisioning condition has status and
// reason, for the buffer's current generation, and returns it.
func waitForProvisioning(f *stack.Fixture, name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	f.T.Helper()
	var c *metav1.Condition
	f.Eventually(fmt.Sprintf("buffer %s is Provisioning=%s %s", name, status, reason), func() bool {
		b := &autoscalingv1beta1.CapacityBuffer{}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Namespace: "default", Name: name}, b); err != nil {
			return false
		}
		c = meta.FindStatusCondition(b.Status.Conditions, "Provisioning")
		return c != nil && c.Status == status && c.Reason == reason && c.ObservedGeneration == b.Generation
	})
	return c
}

// anotherPass makes provisioning look at the buffer again and waits until it did: the
// buffer's spec changes (its generation with it; the status, which provisioning reads,
// stays), and the Provisioning condition follows the new generation once a pass ran.
// What a pass would do wrong shows once this returns.
func anotherPass(f *stack.Fixture, name string, status metav1.ConditionStatus, reason string) {
	f.T.Helper()
	stack.Patch(f, &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}, func(b *autoscalingv1beta1.CapacityBuffer) {
		b.Spec.Limits = &autoscalingv1beta1.ResourceList{"cpu": resource.MustParse(fmt.Sprintf("%d", 1000+b.Generation))}
	})
	waitForProvisioning(f, name, status, reason)
}

// bufferClaims returns the pool's claims asked to run that name the buffer.
func bufferClaims(f *stack.Fixture, pool, buffer string) []v1beta1.NodeClaim {
	var out []v1beta1.NodeClaim
	for _, c := range runningClaims(f, pool) {
		if c.Annotations[annotationBuffer] == "default/"+buffer {
			out = append(out, c)
		}
	}
	return out
}

// runningClaims returns the pool's claims asked to run.
func runningClaims(f *stack.Fixture, pool string) []v1beta1.NodeClaim {
	var out []v1beta1.NodeClaim
	for _, c := range f.Claims(pool) {
		if c.Spec.DesiredState == v1beta1.DesiredRunning && c.DeletionTimestamp.IsZero() {
			out = append(out, c)
		}
	}
	return out
}

// pendingPods creates n pods of cpu and marks them Unschedulable, as kube-scheduler
// would when no node has room.
func pendingPods(f *stack.Fixture, prefix string, n int, cpu string) []*corev1.Pod {
	f.T.Helper()
	out := make([]*corev1.Pod, n)
	for i := range out {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Namespace: "default", Labels: map[string]string{"app": prefix}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Resources: requests(cpu)}}},
		}
		f.Create(pod)
		f.MarkUnschedulable(pod)
		out[i] = pod
	}
	return out
}

// bind binds a pod to a Node, as kube-scheduler does.
func bind(f *stack.Fixture, pod *corev1.Pod, node string) {
	f.T.Helper()
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := f.Env.Client.SubResource("binding").Create(f.Ctx, pod, binding); err != nil {
		f.T.Fatalf("binding pod %s to %s: %v", pod.Name, node, err)
	}
}

// placedOn returns the claim provisioning placed the pod on, as the operator's
// nominations tell (pods alike on one claim get no reservation toleration to read);
// "" when none. A nomination holds until the pod binds, and 5 s after its claim runs.
func placedOn(f *stack.Fixture, pod *corev1.Pod) string {
	f.T.Helper()
	claim, _ := f.Op.State.Nominated(pod.UID)
	return claim
}

// eventReasons returns the reasons of the Events about an object of a kind.
func eventReasons(f *stack.Fixture, kind, name string) []string {
	f.T.Helper()
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}
