package capiprovider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// machineOf reads the Machine of a claim.
func machineOf(t *testing.T, claim string) *clusterv1.Machine {
	t.Helper()
	m := &clusterv1.Machine{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: claim}, m); err != nil {
		t.Fatalf("reading Machine %s: %v", claim, err)
	}
	return m
}

// objectOf reads a provider object of a claim.
func objectOf(t *testing.T, gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		t.Fatalf("reading %s %s: %v", gvk.Kind, name, err)
	}
	return u
}

// A launch makes a Machine of the cheapest type and zone that refers to a bootstrap
// config and an infrastructure machine made from the class's templates, all three
// labelled with the launch's tags, the cluster, type and zone; the two are owned by the
// Machine, and the bootstrap config registers the Node with the launch's taints, kubelet
// labels and kubelet configuration in kubeadm's shape.
func TestCreate(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	req := launchOf(class, "create-a", "default", "uid-create-a")
	req.Kubelet = &v1beta1.KubeletConfiguration{EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "300Mi"}}
	instance, err := provider.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if instance.ID != namespace+"/create-a" || instance.Type != "small" || instance.Zone != "rack-a" ||
		instance.CapacityType != v1beta1.CapacityTypeOnDemand || instance.State != cloudprovider.StatePending || instance.NotOwned {
		t.Errorf("instance %+v, want capi/create-a, small on-demand in rack-a, pending", instance)
	}

	machine := machineOf(t, "create-a")
	wantLabels := map[string]string{
		v1beta1.TagCluster: clusterName, v1beta1.TagNodePool: "default", v1beta1.TagNodeClaim: "create-a",
		clusterv1.ClusterNameLabel: capiCluster, "node.kubernetes.io/instance-type": "small", "topology.kubernetes.io/zone": "rack-a",
	}
	for k, v := range wantLabels {
		if machine.Labels[k] != v {
			t.Errorf("Machine label %s = %q, want %q", k, machine.Labels[k], v)
		}
	}
	if machine.Annotations["stratos.sh/client-token"] != "uid-create-a" || machine.Annotations[clusterv1.ExcludeNodeDrainingAnnotation] == "" {
		t.Errorf("Machine annotations %v lack the client token or CAPI's drain exclusion", machine.Annotations)
	}
	spec := machine.Spec
	if spec.ClusterName != capiCluster || spec.Version != "v1.37.2" || spec.FailureDomain != "rack-a" {
		t.Errorf("Machine spec: cluster %q, version %q, failure domain %q", spec.ClusterName, spec.Version, spec.FailureDomain)
	}
	if want := (clusterv1.ContractVersionedObjectReference{APIGroup: configKind.Group, Kind: configKind.Kind, Name: "create-a"}); spec.Bootstrap.ConfigRef != want {
		t.Errorf("bootstrap configRef %+v, want %+v", spec.Bootstrap.ConfigRef, want)
	}
	if want := (clusterv1.ContractVersionedObjectReference{APIGroup: machineKind.Group, Kind: machineKind.Kind, Name: "create-a"}); spec.InfrastructureRef != want {
		t.Errorf("infrastructureRef %+v, want %+v", spec.InfrastructureRef, want)
	}

	config := objectOf(t, configKind, "create-a")
	infra := objectOf(t, machineKind, "create-a")
	for _, obj := range []*unstructured.Unstructured{config, infra} {
		for k, v := range wantLabels {
			if obj.GetLabels()[k] != v {
				t.Errorf("%s label %s = %q, want %q", obj.GetKind(), k, obj.GetLabels()[k], v)
			}
		}
		owners := obj.GetOwnerReferences()
		if len(owners) != 1 || owners[0].UID != machine.UID || owners[0].Kind != "Machine" || owners[0].APIVersion != clusterv1.GroupVersion.String() ||
			owners[0].Controller == nil || !*owners[0].Controller || owners[0].BlockOwnerDeletion == nil || !*owners[0].BlockOwnerDeletion {
			t.Errorf("%s owners %+v, want the Machine %s as controller, blocking its deletion", obj.GetKind(), owners, machine.UID)
		}
	}
	if config.GetLabels()["tier"] != "worker" {
		t.Errorf("bootstrap config lacks its template's label tier=worker: %v", config.GetLabels())
	}
	if image, _, _ := unstructured.NestedString(infra.Object, "spec", "image"); image != "ubuntu-24.04" {
		t.Errorf("infrastructure machine spec.image %q, want the template's", image)
	}

	registration, _, _ := unstructured.NestedMap(config.Object, "spec", "joinConfiguration", "nodeRegistration")
	taints, _ := registration["taints"].([]any)
	if len(taints) != 1 || taints[0].(map[string]any)["key"] != v1beta1.StandbyTaint.Key || taints[0].(map[string]any)["effect"] != string(v1beta1.StandbyTaint.Effect) {
		t.Errorf("node registration taints %v, want the standby taint", taints)
	}
	args := map[string]string{}
	for _, a := range registration["kubeletExtraArgs"].([]any) {
		arg := a.(map[string]any)
		args[arg["name"].(string)], _ = arg["value"].(string)
	}
	if args["max-pods"] != "50" {
		t.Errorf("kubelet args %v lost the template's max-pods", args)
	}
	if args["eviction-hard"] != "memory.available<300Mi" {
		t.Errorf("kubelet args %v lack the pool's eviction-hard", args)
	}
	if want := "stratos.sh/nodeclaim=create-a,stratos.sh/nodepool=default,team=blue"; args["node-labels"] != want {
		t.Errorf("node-labels %q, want %q (no node-role label: the kubelet refuses it)", args["node-labels"], want)
	}
}

// A launch redone with the same client token returns the same instance and creates
// nothing; one with another token is refused, naming the Machine.
func TestCreateIdempotent(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	first, err := provider.Create(ctx, launchOf(class, "again-a", "default", "uid-again-a"))
	if err != nil {
		t.Fatal(err)
	}
	before := []client.Object{machineOf(t, "again-a"), objectOf(t, configKind, "again-a"), objectOf(t, machineKind, "again-a")}

	second, err := provider.Create(ctx, launchOf(class, "again-a", "default", "uid-again-a"))
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != first.ID || second.Type != first.Type || second.Zone != first.Zone {
		t.Errorf("redone launch gave %+v, want %+v", second, first)
	}
	after := []client.Object{machineOf(t, "again-a"), objectOf(t, configKind, "again-a"), objectOf(t, machineKind, "again-a")}
	for i := range before {
		if before[i].GetUID() != after[i].GetUID() || before[i].GetResourceVersion() != after[i].GetResourceVersion() {
			t.Errorf("%s changed: uid %s → %s, resourceVersion %s → %s", after[i].GetName(), before[i].GetUID(), after[i].GetUID(),
				before[i].GetResourceVersion(), after[i].GetResourceVersion())
		}
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.MatchingLabels{v1beta1.TagNodeClaim: "again-a"}); err != nil {
		t.Fatal(err)
	}
	if len(machines.Items) != 1 {
		t.Errorf("%d Machines of the claim, want 1", len(machines.Items))
	}

	_, err = provider.Create(ctx, launchOf(class, "again-a", "default", "uid-of-another-claim"))
	if !errors.Is(err, cloudprovider.ErrInvalidState) || !strings.Contains(err.Error(), namespace+"/again-a") {
		t.Errorf("launch with another token: error %v, want InvalidState naming the Machine", err)
	}
}

// A launch that stopped after its Machine (a crash) is finished by the launch redone:
// the missing bootstrap config and infrastructure machine are created, owned by the
// Machine that was there.
func TestCreateResumes(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	if _, err := provider.Create(ctx, launchOf(class, "resume-a", "default", "uid-resume-a")); err != nil {
		t.Fatal(err)
	}
	machine := machineOf(t, "resume-a")
	for _, gvk := range []schema.GroupVersionKind{configKind, machineKind} {
		if err := c.Delete(ctx, objectOf(t, gvk, "resume-a")); err != nil {
			t.Fatal(err)
		}
	}
	instance, err := provider.Create(ctx, launchOf(class, "resume-a", "default", "uid-resume-a"))
	if err != nil {
		t.Fatal(err)
	}
	if instance.ID != namespace+"/resume-a" || machineOf(t, "resume-a").UID != machine.UID {
		t.Errorf("redone launch gave %s, not the Machine that was there", instance.ID)
	}
	for _, gvk := range []schema.GroupVersionKind{configKind, machineKind} {
		if owners := objectOf(t, gvk, "resume-a").GetOwnerReferences(); len(owners) != 1 || owners[0].UID != machine.UID {
			t.Errorf("recreated %s owners %+v, want the Machine", gvk.Kind, owners)
		}
	}
}

// A class over a template that does not exist cannot launch: the error is
// InvalidParameter (no hot retry), names the template, and nothing is created.
func TestCreateMissingTemplate(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, "absent"))
	_, err := provider.Create(ctx, launchOf(class, "missing-a", "default", "uid-missing-a"))
	if !errors.Is(err, cloudprovider.ErrInvalidParameter) || cloudprovider.IsRetryable(err) {
		t.Fatalf("error %v, want InvalidParameter, not retryable", err)
	}
	if want := "TestMachineTemplate capi/absent does not exist"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "missing-a"}, &clusterv1.Machine{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Machine was made for a class that cannot launch: %v", err)
	}

	noCRD := classOver(v1beta1.ClusterAPITemplateReference{APIGroup: "infrastructure.nowhere.example.com", Kind: "NoMachineTemplate", Name: "x"})
	_, err = provider.Create(ctx, launchOf(noCRD, "missing-b", "default", "uid-missing-b"))
	if !errors.Is(err, cloudprovider.ErrInvalidParameter) || !strings.Contains(err.Error(), "NoMachineTemplate") {
		t.Errorf("template kind no CRD serves: error %v, want InvalidParameter naming the kind", err)
	}

	uncontracted := classOver(ref(uncontractedTemplateKind, "legacy"))
	_, err = provider.Create(ctx, launchOf(uncontracted, "missing-c", "default", "uid-missing-c"))
	if !errors.Is(err, cloudprovider.ErrInvalidParameter) || !strings.Contains(err.Error(), contractLabel) {
		t.Errorf("template kind without CAPI's contract label: error %v, want InvalidParameter naming the label", err)
	}
}

// A launch that finished is found again by the launch redone even when its template has
// gone since: nothing is missing, so nothing is read from the template.
func TestCreateRedoneAfterTemplateGone(t *testing.T) {
	ctx := context.Background()
	template := templateOf(machineTemplateKind, "short-lived", map[string]any{"spec": map[string]any{"image": "ubuntu-24.04"}})
	if err := c.Create(ctx, template); err != nil {
		t.Fatal(err)
	}
	class := classOver(ref(machineTemplateKind, "short-lived"))
	first, err := provider.Create(ctx, launchOf(class, "gone-a", "default", "uid-gone-a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, template); err != nil {
		t.Fatal(err)
	}
	second, err := provider.Create(ctx, launchOf(class, "gone-a", "default", "uid-gone-a"))
	if err != nil {
		t.Fatalf("launch redone after its template went: %v", err)
	}
	if second.ID != first.ID {
		t.Errorf("redone launch gave %s, want %s", second.ID, first.ID)
	}
}
