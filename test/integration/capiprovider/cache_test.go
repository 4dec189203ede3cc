package capiprovider_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
)

// With Machines read through a cache, as in the operator, a Machine the cache has not
// seen is looked for on the API server before an action calls it gone: terminating a
// claim's Machine right after its launch deletes it rather than leaking it. The cache
// here never sees the test's Machines, which makes the lag of a real one last.
func TestTerminateBehindCache(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	blind, err := cache.New(cfg, cache.Options{Scheme: c.Scheme(), ByObject: map[client.Object]cache.ByObject{
		&clusterv1.Machine{}: {Label: labels.SelectorFromSet(labels.Set{"cached": "never"})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = blind.Start(ctx) }()
	if !blind.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	cached, err := client.New(cfg, client.Options{Scheme: c.Scheme(), Cache: &client.CacheOptions{Reader: blind}})
	if err != nil {
		t.Fatal(err)
	}
	behind, err := clusterapi.New(clusterapi.Options{ClusterName: clusterName, Client: cached, Reader: c})
	if err != nil {
		t.Fatal(err)
	}

	class := classOver(ref(machineTemplateKind, machineTemplate))
	instance, err := behind.Create(ctx, launchOf(class, "behind-a", "default", "uid-behind-a"))
	if err != nil {
		t.Fatal(err)
	}
	errs, err := behind.TerminateInstances(ctx, []string{instance.ID})
	if err != nil || len(errs) != 0 {
		t.Fatalf("terminate: %v, %v", errs, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "behind-a"}, &clusterv1.Machine{}); !apierrors.IsNotFound(err) {
		t.Errorf("Machine behind-a after Terminate: %v, want deleted", err)
	}
}
