package clusterapi_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// machine is a Machine of cluster "workload" at version, bootstrapped by a data secret,
// whose infrastructure is an object of the test's infrastructure group.
func machine(namespace, name, version string) *clusterv1.Machine {
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: clusterv1.MachineSpec{
			ClusterName:       "workload",
			Version:           version,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: new("bootstrap-data")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGroup, Kind: "TestInfraMachine", Name: name},
		},
	}
}

// CAPI's validating webhook refuses what the CRD's schema lets through: a version that
// is no semantic version is refused with CAPI's own message.
func TestCAPIsWebhookRefusesAMachineWithAVersionThatIsNoSemanticVersion(t *testing.T) {
	ctx, ns := testContext(t), namespace(t)
	err := c.Create(ctx, machine(ns, "bad-version", "v1.thirty.0"))
	if !apierrors.IsInvalid(err) {
		t.Fatalf("creating a Machine of version v1.thirty.0: %v, want it refused as invalid", err)
	}
	for _, want := range []string{`spec.version: Invalid value: "v1.thirty.0": must be a valid semantic version`, "admission webhook"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
}

// CAPI's defaulting webhook runs on create: a version without its "v" gets one, and the
// Machine is labelled with its cluster's name.
func TestCAPIsWebhookDefaultsAMachine(t *testing.T) {
	ctx, ns := testContext(t), namespace(t)
	m := machine(ns, "defaulted", "1.30.2")
	if err := c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	got := &clusterv1.Machine{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(m), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Version != "v1.30.2" || got.Labels[clusterv1.ClusterNameLabel] != "workload" {
		t.Fatalf("the Machine reads back with version %q and labels %v; want v1.30.2 and %s=workload", got.Spec.Version, got.Labels, clusterv1.ClusterNameLabel)
	}
}

// CAPI's conversion webhook serves v1beta1 of a Cluster written as v1beta2, and the
// other way round: the contract-versioned reference of v1beta2 ({apiGroup, kind, name})
// becomes v1beta1's object reference, whose apiVersion is the version the referenced
// CRD's contract label names.
func TestCAPIsConversionServesAClusterInBothVersions(t *testing.T) {
	ctx, ns := testContext(t), namespace(t)
	written := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "written-as-v1beta2"},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork:    clusterv1.ClusterNetwork{Pods: clusterv1.NetworkRanges{CIDRBlocks: []string{"10.244.0.0/16"}}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGroup, Kind: infraKind, Name: "infra"},
		},
	}
	if err := c.Create(ctx, written); err != nil {
		t.Fatal(err)
	}
	old := &unstructured.Unstructured{}
	old.SetAPIVersion(clusterv1.GroupVersion.Group + "/v1beta1")
	old.SetKind("Cluster")
	if err := c.Get(ctx, client.ObjectKeyFromObject(written), old); err != nil {
		t.Fatal(err)
	}
	ref, _, _ := unstructured.NestedStringMap(old.Object, "spec", "infrastructureRef")
	wantRef := map[string]string{"apiVersion": infraGroup + "/" + infraVersion, "kind": infraKind, "name": "infra", "namespace": ns}
	if len(ref) != len(wantRef) {
		t.Errorf("v1beta1 spec.infrastructureRef is %v, want %v", ref, wantRef)
	}
	for k, v := range wantRef {
		if ref[k] != v {
			t.Errorf("v1beta1 spec.infrastructureRef is %v, want %v", ref, wantRef)
			break
		}
	}
	pods, _, _ := unstructured.NestedStringSlice(old.Object, "spec", "clusterNetwork", "pods", "cidrBlocks")
	if len(pods) != 1 || pods[0] != "10.244.0.0/16" {
		t.Errorf("v1beta1 spec.clusterNetwork.pods.cidrBlocks is %v, want [10.244.0.0/16]", pods)
	}

	// Written as v1beta1, read as v1beta2.
	legacy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.Group + "/v1beta1",
		"kind":       "Cluster",
		"metadata":   map[string]any{"namespace": ns, "name": "written-as-v1beta1"},
		"spec": map[string]any{"infrastructureRef": map[string]any{
			"apiVersion": infraGroup + "/" + infraVersion, "kind": infraKind, "name": "legacy-infra", "namespace": ns,
		}},
	}}
	if err := c.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	current := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(legacy), current); err != nil {
		t.Fatal(err)
	}
	want := clusterv1.ContractVersionedObjectReference{APIGroup: infraGroup, Kind: infraKind, Name: "legacy-infra"}
	if current.Spec.InfrastructureRef != want {
		t.Errorf("v1beta2 spec.infrastructureRef is %+v, want %+v", current.Spec.InfrastructureRef, want)
	}
}
