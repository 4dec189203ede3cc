package capacitybuffer_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
)

// A buffer of a PodTemplate resolves: its status names the template and its generation,
// the replicas asked, the strategy, and ReadyForProvisioning True, as the pure reader
// (capacitybuffer.Resolved) that provisioning uses sees it. A later pass that changes
// nothing writes nothing.
func TestPodTemplateBufferResolves(t *testing.T) {
	f := newFixture(t)
	template := podTemplate("web", podSpec("web:1", "500m", "256Mi"))
	f.create(template)
	f.create(templateBuffer("web", "web", ptr.To[int32](3)))

	f.eventually("the buffer to resolve", func() bool { return f.readyWith("web", metav1.ConditionTrue, "Resolved") })
	b := f.buffer("web")
	if !capacitybuffer.Resolved(b) {
		t.Fatalf("capacitybuffer.Resolved is false for a buffer whose ReadyForProvisioning is True: %+v", b.Status)
	}
	if b.Status.PodTemplateRef == nil || b.Status.PodTemplateRef.Name != "web" {
		t.Errorf("status.podTemplateRef = %+v, want web", b.Status.PodTemplateRef)
	}
	if got := ptr.Deref(b.Status.Replicas, -1); got != 3 {
		t.Errorf("status.replicas = %d, want 3", got)
	}
	if b.Status.PodTemplateGeneration == nil || *b.Status.PodTemplateGeneration != template.Generation {
		t.Errorf("status.podTemplateGeneration = %v, want the template's generation %d", b.Status.PodTemplateGeneration, template.Generation)
	}
	if got := ptr.Deref(b.Status.ProvisioningStrategy, ""); got != autoscalingv1beta1.StrategyActiveCapacity {
		t.Errorf("status.provisioningStrategy = %q, want the default %q", got, autoscalingv1beta1.StrategyActiveCapacity)
	}
	if c := f.condition("web", autoscalingv1beta1.ConditionLimitedByQuotas); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("LimitedByQuotas = %+v, want False without limits", c)
	}
	// Events are recorded asynchronously, after the change they tell of.
	f.eventually("a Resolved Event for the buffer that resolved", func() bool { return len(f.events("web", "Resolved")) > 0 })

	// A change of the template's labels only brings the buffer back (the PodTemplate
	// watch) and changes none of its status: no write. The creation of a second
	// template, seen after it by the same informer and worked on after it by the single
	// worker, tells when the pass is done.
	// Provisioning writes the buffer's Provisioning condition too (NoPoolFits: the
	// fixture has no pools); once it is there, neither writer has anything to change.
	f.eventually("provisioning to write the buffer's Provisioning condition", func() bool {
		return f.condition("web", autoscalingv1beta1.ConditionProvisioning) != nil
	})
	writes := f.statusWrites("web")
	if writes == 0 {
		t.Fatal("no status write of the operator's counted for the buffer it resolved")
	}
	relabelled := &corev1.PodTemplate{}
	if err := env.Client.Get(f.ctx, client.ObjectKeyFromObject(template), relabelled); err != nil {
		t.Fatal(err)
	}
	relabelled.Labels = map[string]string{"touched": "yes"}
	if err := env.Client.Update(f.ctx, relabelled); err != nil {
		t.Fatal(err)
	}
	f.create(templateBuffer("marker", "marker", ptr.To[int32](1)))
	f.eventually("the marker buffer to say its template is missing", func() bool {
		return f.readyWith("marker", metav1.ConditionFalse, "PodTemplateNotFound")
	})
	f.create(podTemplate("marker", podSpec("marker:1", "100m", "64Mi")))
	f.eventually("the marker buffer to resolve", func() bool { return f.readyWith("marker", metav1.ConditionTrue, "Resolved") })
	if got := f.statusWrites("web"); got != writes {
		t.Errorf("the buffer's status was written %d more times after a change that alters none of it", got-writes)
	}

	// The template's spec changes: its generation goes up, and so does the buffer's
	// status.podTemplateGeneration.
	changed := &corev1.PodTemplate{}
	if err := env.Client.Get(f.ctx, client.ObjectKeyFromObject(template), changed); err != nil {
		t.Fatal(err)
	}
	changed.Template.Spec.Containers[0].Image = "web:2"
	if err := env.Client.Update(f.ctx, changed); err != nil {
		t.Fatal(err)
	}
	if changed.Generation <= template.Generation {
		t.Fatalf("the API server did not raise the PodTemplate's generation (%d, was %d)", changed.Generation, template.Generation)
	}
	f.eventually("status.podTemplateGeneration to follow the template", func() bool {
		g := f.buffer("web").Status.PodTemplateGeneration
		return g != nil && *g == changed.Generation
	})
}

// A buffer of 20% of a Deployment keeps room for 2 chunks of its 10 replicas, and for 4
// once it is scaled to 20. The template Stratos makes is the Deployment's pod template,
// owned by the buffer (so that garbage collection removes it with the buffer), and
// follows the Deployment's template.
func TestDeploymentPercentageFollowsScale(t *testing.T) {
	f := newFixture(t)
	f.create(deployment("api", 10, podSpec("api:1", "250m", "128Mi")))
	f.create(workloadBuffer("api", "Deployment", "api", 20))

	f.eventually("2 chunks for 20% of 10 replicas", func() bool {
		return f.readyWith("api", metav1.ConditionTrue, "Resolved") && f.replicas("api") == 2
	})
	b := f.buffer("api")
	if b.Status.PodTemplateRef == nil {
		t.Fatal("status.podTemplateRef is unset for a resolved buffer of a Deployment")
	}
	made := &corev1.PodTemplate{}
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: b.Status.PodTemplateRef.Name}, made); err != nil {
		t.Fatalf("the PodTemplate the status names: %v", err)
	}
	owner := metav1.GetControllerOf(made)
	if owner == nil || owner.UID != b.UID || owner.Kind != "CapacityBuffer" {
		t.Errorf("the PodTemplate made for the buffer is controlled by %+v, want the buffer %s", owner, b.UID)
	}
	if got := made.Template.Spec.Containers[0].Image; got != "api:1" {
		t.Errorf("the PodTemplate made for the buffer runs %q, want the Deployment's api:1", got)
	}
	if made.Template.Labels["app"] != "api" {
		t.Errorf("the PodTemplate made for the buffer has labels %v, want the Deployment's pod labels", made.Template.Labels)
	}

	scale(f, "api", 20)
	f.eventually("4 chunks for 20% of 20 replicas", func() bool { return f.replicas("api") == 4 })

	d := &appsv1.Deployment{}
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "api"}, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "api:2"
	if err := env.Client.Update(f.ctx, d); err != nil {
		t.Fatal(err)
	}
	f.eventually("the buffer's PodTemplate to follow the Deployment's", func() bool {
		pt := &corev1.PodTemplate{}
		if err := env.Client.Get(f.ctx, client.ObjectKeyFromObject(made), pt); err != nil {
			t.Fatal(err)
		}
		g := f.buffer("api").Status.PodTemplateGeneration
		return pt.Template.Spec.Containers[0].Image == "api:2" && g != nil && *g == pt.Generation && pt.Generation > made.Generation
	})
}

func scale(f *fixture, name string, replicas int32) {
	f.t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, d); err != nil {
		f.t.Fatal(err)
	}
	base := d.DeepCopy()
	d.Spec.Replicas = ptr.To(replicas)
	if err := env.Client.Patch(f.ctx, d, client.MergeFrom(base)); err != nil {
		f.t.Fatal(err)
	}
}

// Limits cut the chunks by their total requests: 5 chunks of 500m in 1.5 CPUs are 3,
// with LimitedByQuotas True, its message, and a Warning; limits that leave room for none
// make the buffer not ready (LimitsTooSmall). With neither replicas nor percentage the
// limits say how many.
func TestLimitsCutReplicas(t *testing.T) {
	f := newFixture(t)
	f.create(podTemplate("batch", podSpec("batch:1", "500m", "1Gi")))
	cut := templateBuffer("cut", "batch", ptr.To[int32](5))
	cut.Spec.Limits = &autoscalingv1beta1.ResourceList{"cpu": resource.MustParse("1500m")}
	f.create(cut)
	none := templateBuffer("none", "batch", ptr.To[int32](2))
	none.Spec.Limits = &autoscalingv1beta1.ResourceList{"memory": resource.MustParse("512Mi")}
	f.create(none)
	only := templateBuffer("only", "batch", nil)
	only.Spec.Limits = &autoscalingv1beta1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("3Gi")}
	f.create(only)

	f.eventually("3 chunks within 1.5 CPUs", func() bool {
		return f.readyWith("cut", metav1.ConditionTrue, "Resolved") && f.replicas("cut") == 3
	})
	limited := f.condition("cut", autoscalingv1beta1.ConditionLimitedByQuotas)
	if limited == nil || limited.Status != metav1.ConditionTrue || limited.Message == "" {
		t.Errorf("LimitedByQuotas = %+v, want True with a message", limited)
	}
	f.eventually("a LimitedByQuotas Warning", func() bool {
		events := f.events("cut", "LimitedByQuotas")
		return len(events) > 0 && events[0].Type == corev1.EventTypeWarning
	})

	f.eventually("the buffer whose limits fit no chunk to say so", func() bool {
		return f.readyWith("none", metav1.ConditionFalse, "LimitsTooSmall")
	})
	if !capacitybufferLimited(f, "none") {
		t.Error("LimitedByQuotas is not True for the buffer whose limits fit no chunk")
	}
	f.eventually("a LimitsTooSmall Warning", func() bool { return len(f.events("none", "LimitsTooSmall")) > 0 })

	f.eventually("as many chunks as the limits allow: 3 (memory 3Gi / 1Gi)", func() bool {
		return f.readyWith("only", metav1.ConditionTrue, "Resolved") && f.replicas("only") == 3
	})
	if capacitybufferLimited(f, "only") {
		t.Error("LimitedByQuotas is True for a buffer the limits size rather than cut")
	}
}

func capacitybufferLimited(f *fixture, name string) bool {
	c := f.condition(name, autoscalingv1beta1.ConditionLimitedByQuotas)
	return c != nil && c.Status == metav1.ConditionTrue
}
