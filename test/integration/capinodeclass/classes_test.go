package capinodeclass_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/clusterapinodeclass"
	"github.com/stratos-sh/stratos/internal/nodeclass"
)

func ref(group, kind, name string) v1beta1.ClusterAPITemplateReference {
	return v1beta1.ClusterAPITemplateReference{APIGroup: group, Kind: kind, Name: name}
}

// class is a ClusterAPINodeClass of Cluster default/work with the test providers'
// templates.
func class(name string, infra v1beta1.ClusterAPITemplateReference, perType *v1beta1.ClusterAPITemplateReference) *v1beta1.ClusterAPINodeClass {
	return &v1beta1.ClusterAPINodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.ClusterAPINodeClassSpec{
		Cluster:                   v1beta1.ClusterAPIClusterReference{Namespace: "default", Name: "work"},
		BootstrapTemplateRef:      ref(bootstrapGroup, "TestConfigTemplate", "workers"),
		InfrastructureTemplateRef: infra,
		Version:                   "v1.37.2",
		InstanceTypes: []v1beta1.ClusterAPIInstanceType{{Name: "small", Zones: []string{"rack-1"}, PricePerHour: "0.1", InfrastructureTemplateRef: perType,
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")}}},
	}}
}

// readyWhen waits until the class's Ready condition, for its generation, passes ok, and
// returns the class.
func (f *fixture) readyWhen(name string, ok func(*metav1.Condition) bool) (*v1beta1.ClusterAPINodeClass, *metav1.Condition) {
	f.t.Helper()
	got := &v1beta1.ClusterAPINodeClass{}
	var ready *metav1.Condition
	f.eventually("ClusterAPINodeClass "+name+"'s Ready condition", func() bool {
		if err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: name}, got); err != nil {
			return false
		}
		ready = meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionReady)
		return ready != nil && ready.ObservedGeneration == got.Generation && ok(ready)
	})
	return got, ready
}

func because(reason string) func(*metav1.Condition) bool {
	return func(c *metav1.Condition) bool { return c.Status == metav1.ConditionFalse && c.Reason == reason }
}

func isTrue(c *metav1.Condition) bool { return c.Status == metav1.ConditionTrue }

// eventReasons lists the reasons of the Events about the class, by type.
func (f *fixture) eventReasons(name, eventType string) []string {
	f.t.Helper()
	events := &eventsv1.EventList{}
	if err := f.env.Client.List(f.ctx, events); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Type == eventType {
			out = append(out, e.Reason)
		}
	}
	return out
}

// A class resolves once its Cluster and every template it names exist; until then its
// Ready condition and a Warning Event say what is missing, and once it resolves a Normal
// Event says so. Its infrastructure, whose machines Stratos can power off and on, lets
// its pools stand by.
func TestClassResolvesOnceItsClusterAndTemplatesExist(t *testing.T) {
	f := newFixture(t)
	f.create(class("work", ref(infraGroup, "TestMachineTemplate", "workers"), nil))

	_, ready := f.readyWhen("work", because(clusterapinodeclass.ReasonClusterNotFound))
	if !strings.Contains(ready.Message, "Cluster default/work does not exist") {
		t.Errorf("Ready's message %q does not name the Cluster", ready.Message)
	}
	f.cluster("work")
	_, ready = f.readyWhen("work", because(clusterapinodeclass.ReasonTemplateNotFound))
	if !strings.Contains(ready.Message, "TestConfigTemplate.bootstrap.test.stratos.sh default/workers") {
		t.Errorf("Ready's message %q does not name the bootstrap template", ready.Message)
	}
	f.template(bootstrapGroup, "v1beta1", "TestConfigTemplate", "workers")
	f.eventually("the infrastructure template is what is missing", func() bool {
		_, ready = f.readyWhen("work", because(clusterapinodeclass.ReasonTemplateNotFound))
		return strings.Contains(ready.Message, "infrastructure template TestMachineTemplate")
	})
	// Read at v1beta1, the latest version its CRD names for the contract.
	f.template(infraGroup, "v1beta1", "TestMachineTemplate", "workers")
	got, _ := f.readyWhen("work", isTrue)
	if got.Status.Standby != v1beta1.ClusterAPIStandbySupported {
		t.Errorf("standby %q; want %s: TestMachines can be powered off", got.Status.Standby, v1beta1.ClusterAPIStandbySupported)
	}
	if ok, _, _ := nodeclass.Ready(got); !ok {
		t.Error("nodeclass.Ready refuses the resolved class")
	}
	f.eventually("the Events tell the story", func() bool {
		warnings, normals := f.eventReasons("work", corev1.EventTypeWarning), f.eventReasons("work", corev1.EventTypeNormal)
		return contains(warnings, clusterapinodeclass.ReasonClusterNotFound) && contains(warnings, clusterapinodeclass.ReasonTemplateNotFound) &&
			contains(normals, clusterapinodeclass.ReasonResolved)
	})
}

// A class one of whose instance types has an infrastructure Stratos cannot power off
// resolves, but cannot stand by; kinds the API server does not serve, and kinds whose CRD
// names no contract version, are refused by name.
func TestClassStandbyAndBadKinds(t *testing.T) {
	f := newFixture(t)
	f.cluster("work")
	f.template(bootstrapGroup, "v1beta1", "TestConfigTemplate", "workers")
	f.template(infraGroup, "v1beta1", "TestMachineTemplate", "workers")
	f.template(infraGroup, "v1beta1", "PlainMachineTemplate", "plain")
	f.template(infraGroup, "v1beta1", "UnlabelledMachineTemplate", "unlabelled")

	plain := ref(infraGroup, "PlainMachineTemplate", "plain")
	f.create(class("mixed", ref(infraGroup, "TestMachineTemplate", "workers"), &plain))
	got, _ := f.readyWhen("mixed", isTrue)
	if got.Status.Standby != v1beta1.ClusterAPIStandbyUnsupported {
		t.Errorf("standby %q; want %s: PlainMachines cannot be powered off", got.Status.Standby, v1beta1.ClusterAPIStandbyUnsupported)
	}
	if ok, reason, message := nodeclass.CanStandBy(got); ok || reason != nodeclass.ReasonStandbyUnsupported || !strings.Contains(message, "PlainMachine."+infraGroup) {
		t.Errorf("CanStandBy = %v, %q, %q; want false naming PlainMachine", ok, reason, message)
	}

	f.create(class("unlabelled", ref(infraGroup, "UnlabelledMachineTemplate", "unlabelled"), nil))
	_, ready := f.readyWhen("unlabelled", because(clusterapinodeclass.ReasonTemplateNotContractVersioned))
	if !strings.Contains(ready.Message, "UnlabelledMachineTemplate") {
		t.Errorf("Ready's message %q does not name the kind", ready.Message)
	}
	f.create(class("unknown", ref("infrastructure.cluster.x-k8s.io", "Metal3MachineTemplate", "workers"), nil))
	_, ready = f.readyWhen("unknown", because(clusterapinodeclass.ReasonTemplateKindUnknown))
	if !strings.Contains(ready.Message, "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io") {
		t.Errorf("Ready's message %q does not name the kind", ready.Message)
	}
}

// cluster creates a Cluster in namespace default, paused: no CAPI controller runs here,
// and a Cluster's spec may not be empty.
func (f *fixture) cluster(name string) {
	f.t.Helper()
	f.create(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
