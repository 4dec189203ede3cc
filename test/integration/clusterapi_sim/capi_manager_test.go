package clusterapisim_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
	"github.com/stratos-sh/stratos/test/harness"
)

// fromTemplate makes an object of kind from the spec.template.spec of the template
// named by ref, as a MachineSet or Stratos's provider makes one: same namespace, the
// given name and labels, owned by the Machine.
func fromTemplate(e *simEnv, namespace, kind, template, name string, labels map[string]string, owner *clusterv1.Machine) *unstructured.Unstructured {
	e.t.Helper()
	tpl := &unstructured.Unstructured{}
	tpl.SetAPIVersion(v1alpha1.GroupVersion.String())
	tpl.SetKind(kind + "Template")
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: template}, tpl); err != nil {
		e.t.Fatal(err)
	}
	spec, _, err := unstructured.NestedMap(tpl.Object, "spec", "template", "spec")
	if err != nil {
		e.t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion(v1alpha1.GroupVersion.String())
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetLabels(labels)
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: owner.Name, UID: owner.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	e.create(obj)
	return obj
}

// CAPI's real manager moves a Machine whose bootstrap is a SimConfig and whose
// infrastructure is a SimMachine, both made from the templates, to Running with the
// Node the fake kubelet registered as its nodeRef; deleting the Machine terminates the
// instance.
func TestCAPIManagerRunsAMachineOnTheSimulatorsProviders(t *testing.T) {
	env, _ := harness.StartWithClusterAPI(t)
	e := run(t, env)
	if _, err := simprovider.CreateCluster(e.ctx, e.c, simprovider.ClusterOptions{
		Namespace: "capi", Name: clusterName, Kubeconfig: e.kubeconfig(), KubernetesVersion: "v1.37.0",
	}); err != nil {
		t.Fatal(err)
	}
	config := v1alpha1.SimConfigSpec{JoinConfiguration: v1alpha1.JoinConfiguration{NodeRegistration: v1alpha1.NodeRegistrationOptions{
		Taints:           []corev1.Taint{batchTaint},
		KubeletExtraArgs: []v1alpha1.Arg{{Name: "node-labels", Value: "team=data"}},
	}}}
	if _, err := simprovider.CreateTemplates(e.ctx, e.c, simprovider.TemplateOptions{Namespace: "capi", Name: "workers", Config: config}); err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: clusterName}}
	e.eventually("CAPI reports the cluster's infrastructure provisioned and control plane initialized", func() bool {
		return e.get(cluster) && ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false) &&
			ptr.Deref(cluster.Status.Initialization.ControlPlaneInitialized, false)
	})
	if len(cluster.Status.FailureDomains) != 3 {
		t.Errorf("Cluster failure domains = %v, want the fake cloud's three zones", cluster.Status.FailureDomains)
	}

	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName, corev1.LabelInstanceTypeStable: "m5.large"}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: "worker-1", Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: clusterName, Version: "v1.37.0", FailureDomain: "fake-1c",
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimConfig, Name: "worker-1"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimMachine, Name: "worker-1"},
		},
	}
	e.create(machine)
	fromTemplate(e, "capi", v1alpha1.KindSimConfig, "workers", "worker-1", labels, machine)
	fromTemplate(e, "capi", v1alpha1.KindSimMachine, "workers", "worker-1", labels, machine)

	e.eventually("CAPI moves the Machine to Running with a nodeRef", func() bool {
		return e.get(machine) && machine.Status.NodeRef.Name != "" && machine.Status.Phase == string(clusterv1.MachinePhaseRunning)
	})
	infra := &v1alpha1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: "worker-1"}}
	if !e.get(infra) {
		t.Fatal("the SimMachine is gone")
	}
	if machine.Spec.ProviderID == "" || machine.Spec.ProviderID != infra.Spec.ProviderID {
		t.Errorf("Machine providerID %q, SimMachine's %q: want CAPI to have copied it", machine.Spec.ProviderID, infra.Spec.ProviderID)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: machine.Status.NodeRef.Name}}
	if !e.get(node) {
		t.Fatalf("the nodeRef %s names no Node", machine.Status.NodeRef.Name)
	}
	if node.Spec.ProviderID != machine.Spec.ProviderID || node.Labels["team"] != "data" || node.Labels[corev1.LabelTopologyZone] != "fake-1c" {
		t.Errorf("Node providerID %q, labels %v: want the Machine's provider ID, team=data and zone fake-1c", node.Spec.ProviderID, node.Labels)
	}
	if !taintedWith(node, batchTaint) {
		t.Errorf("Node taints = %v, want %v", node.Spec.Taints, batchTaint)
	}
	id := infra.Status.InstanceID

	if err := e.c.Delete(e.ctx, machine); err != nil {
		t.Fatal(err)
	}
	e.eventually("CAPI deletes the Machine once its SimMachine's instance is terminated", func() bool { return !e.get(machine) })
	if instance, _ := e.instance(id); instance.State != cloudprovider.StateTerminated {
		t.Errorf("instance state = %s after the Machine went, want terminated", instance.State)
	}
}

func taintedWith(node *corev1.Node, taint corev1.Taint) bool {
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&taint) && t.Value == taint.Value {
			return true
		}
	}
	return false
}
