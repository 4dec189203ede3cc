package clusterapi_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CAPI's Cluster controller runs: it puts its finalizer on a new Cluster and its
// conditions, which say that the infrastructure cluster is not provisioned yet; once
// the infrastructure cluster says it is, as CAPI's InfraCluster contract has it, the
// controller (which watches the kind from its first read) marks the Cluster's
// infrastructure provisioned, and owns the infrastructure cluster.
func TestCAPIsClusterControllerReconcilesACluster(t *testing.T) {
	ctx, ns := testContext(t), namespace(t)
	// The infrastructure cluster goes first: CAPI looks for a missing one only every 30 s.
	infra := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": infraGroup + "/" + infraVersion,
		"kind":       infraKind,
		"metadata":   map[string]any{"namespace": ns, "name": "reconciled"},
		"status":     map[string]any{"initialization": map[string]any{"provisioned": false}},
	}}
	if err := c.Create(ctx, infra); err != nil {
		t.Fatal(err)
	}
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
	eventually(t, "the Cluster has CAPI's finalizer and says its infrastructure is not ready", func() bool {
		got := get()
		infraReady := meta.FindStatusCondition(got.Status.Conditions, clusterv1.ClusterInfrastructureReadyCondition)
		paused := meta.FindStatusCondition(got.Status.Conditions, clusterv1.PausedCondition)
		return slices.Contains(got.Finalizers, clusterv1.ClusterFinalizer) &&
			infraReady != nil && infraReady.Status != metav1.ConditionTrue &&
			paused != nil && paused.Status == metav1.ConditionFalse &&
			!ptr.Deref(got.Status.Initialization.InfrastructureProvisioned, false)
	})

	provisioned := client.RawPatch(types.MergePatchType, []byte(`{"status":{"initialization":{"provisioned":true}}}`))
	if err := c.Patch(ctx, infra, provisioned); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Cluster's infrastructure is provisioned", func() bool {
		return ptr.Deref(get().Status.Initialization.InfrastructureProvisioned, false)
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
