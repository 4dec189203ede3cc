package clusterapi_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CAPI's Cluster controller runs: it puts its finalizer on a new Cluster and reports in
// its conditions that the infrastructure cluster does not exist; once the
// infrastructure cluster exists and says it is provisioned, as CAPI's InfraCluster
// contract has it, the controller owns it and marks the Cluster's infrastructure
// provisioned.
func TestCAPIsClusterControllerReconcilesACluster(t *testing.T) {
	ctx, ns := testContext(t), namespace(t)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reconciled"},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGroup, Kind: infraKind, Name: "reconciled"},
		},
	}
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	get := func() *clusterv1.Cluster {
		got := &clusterv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	eventually(t, "the Cluster has CAPI's finalizer and says its infrastructure does not exist", func() bool {
		got := get()
		infra := meta.FindStatusCondition(got.Status.Conditions, clusterv1.ClusterInfrastructureReadyCondition)
		return slices.Contains(got.Finalizers, clusterv1.ClusterFinalizer) &&
			infra != nil && infra.Status == metav1.ConditionFalse && infra.Reason == clusterv1.ClusterInfrastructureDoesNotExistReason
	})

	infra := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": infraGroup + "/" + infraVersion,
		"kind":       infraKind,
		"metadata":   map[string]any{"namespace": ns, "name": "reconciled"},
		"status":     map[string]any{"initialization": map[string]any{"provisioned": true}},
	}}
	if err := c.Create(ctx, infra); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Cluster's infrastructure is provisioned", func() bool {
		got := get()
		return got.Status.Initialization.InfrastructureProvisioned != nil && *got.Status.Initialization.InfrastructureProvisioned
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(infra), infra); err != nil {
		t.Fatal(err)
	}
	owned := slices.ContainsFunc(infra.GetOwnerReferences(), func(o metav1.OwnerReference) bool {
		return o.Kind == "Cluster" && o.Name == cluster.Name && o.APIVersion == clusterv1.GroupVersion.String()
	})
	if !owned {
		t.Errorf("the infrastructure cluster's owners are %v, want the Cluster", infra.GetOwnerReferences())
	}
}

// eventually polls cond until it holds, failing the test after 30 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}
