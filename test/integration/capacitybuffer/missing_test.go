package capacitybuffer_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

// A buffer whose PodTemplate, or Deployment, does not exist says so (ReadyForProvisioning
// False with the reason, and a Warning Event), and resolves once it is created: the
// watches bring it back, with no retry loop in between.
func TestMissingTemplateOrWorkloadResolvesOnceCreated(t *testing.T) {
	f := newFixture(t)
	f.create(templateBuffer("later", "later", ptr.To[int32](2)))
	f.create(workloadBuffer("scaled", "Deployment", "scaled", 50))
	f.create(workloadBuffer("jobs", "CronJob", "nightly", 50))

	f.eventually("PodTemplateNotFound", func() bool { return f.readyWith("later", metav1.ConditionFalse, "PodTemplateNotFound") })
	f.eventually("ScalableNotFound", func() bool { return f.readyWith("scaled", metav1.ConditionFalse, "ScalableNotFound") })
	f.eventually("ScalableKindUnsupported for a kind of apps the cluster does not serve", func() bool {
		return f.readyWith("jobs", metav1.ConditionFalse, "ScalableKindUnsupported")
	})
	for name, reason := range map[string]string{"later": "PodTemplateNotFound", "scaled": "ScalableNotFound", "jobs": "ScalableKindUnsupported"} {
		f.eventually("a "+reason+" Warning", func() bool {
			events := f.events(name, reason)
			return len(events) == 1 && events[0].Type == corev1.EventTypeWarning && events[0].Note != ""
		})
	}
	if got := f.condition("later", autoscalingv1beta1.ConditionReadyForProvisioning).Message; got == "" {
		t.Error("PodTemplateNotFound has no message")
	}

	f.create(podTemplate("later", podSpec("later:1", "100m", "64Mi")))
	f.create(deployment("scaled", 4, podSpec("scaled:1", "100m", "64Mi")))
	f.eventually("the buffer of the template created to resolve", func() bool {
		return f.readyWith("later", metav1.ConditionTrue, "Resolved") && f.replicas("later") == 2
	})
	f.eventually("the buffer of the Deployment created to resolve", func() bool {
		return f.readyWith("scaled", metav1.ConditionTrue, "Resolved") && f.replicas("scaled") == 2
	})
	if len(f.events("later", "PodTemplateNotFound")) != 1 {
		t.Error("the PodTemplateNotFound Warning was recorded again: a reason that does not change records one Event")
	}
}

// A buffer of a strategy Stratos does not serve belongs to another autoscaler: Stratos
// writes nothing to it, whatever its status says, and records no Event about it.
func TestForeignStrategyUntouched(t *testing.T) {
	f := newFixture(t)
	f.create(podTemplate("gke", podSpec("gke:1", "100m", "64Mi")))
	foreign := templateBuffer("gke", "gke", ptr.To[int32](2))
	foreign.Spec.ProvisioningStrategy = ptr.To("buffer.gke.io/standby-capacity")
	f.create(foreign)
	// Another autoscaler resolved it its own way.
	foreign.Status = autoscalingv1beta1.CapacityBufferStatus{
		PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "gke"}, Replicas: ptr.To[int32](7),
		ProvisioningStrategy: ptr.To("buffer.gke.io/standby-capacity"),
		Conditions: []metav1.Condition{{Type: autoscalingv1beta1.ConditionReadyForProvisioning, Status: metav1.ConditionFalse,
			Reason: "TheirReason", Message: "theirs", LastTransitionTime: metav1.Now()}},
	}
	if err := env.Client.Status().Update(f.ctx, foreign); err != nil {
		t.Fatal(err)
	}
	want := f.buffer("gke").Status

	// A buffer Stratos serves, created after it and naming the same template: once it
	// resolves, the single worker has had the foreign buffer's turn too (its creation
	// and its status update came first through the same informer).
	f.create(templateBuffer("ours", "gke", ptr.To[int32](1)))
	f.eventually("the buffer Stratos serves to resolve", func() bool { return f.readyWith("ours", metav1.ConditionTrue, "Resolved") })

	if got := f.buffer("gke").Status; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("the foreign buffer's status changed:\n got %+v\nwant %+v", got, want)
	}
	if n := f.statusWrites("gke"); n != 0 {
		t.Errorf("Stratos wrote the foreign buffer's status %d times", n)
	}
	for _, reason := range []string{"Resolved", "PodTemplateNotFound", "LimitedByQuotas"} {
		if len(f.events("gke", reason)) != 0 {
			t.Errorf("an Event %s about the foreign buffer", reason)
		}
	}
}
