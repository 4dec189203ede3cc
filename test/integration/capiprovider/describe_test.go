package capiprovider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// describe describes one instance; nil when the provider does not know it.
func describe(t *testing.T, id string) *cloudprovider.Instance {
	t.Helper()
	instances, err := provider.DescribeInstances(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	return instances[id]
}

// setStatus writes a Machine's status as CAPI's controllers would.
func setStatus(t *testing.T, claim string, change func(*clusterv1.MachineStatus)) {
	t.Helper()
	m := machineOf(t, claim)
	change(&m.Status)
	if err := c.Status().Update(context.Background(), m); err != nil {
		t.Fatalf("updating Machine %s's status: %v", claim, err)
	}
}

// Describe follows the Machine as CAPI moves it: pending while it provisions, running
// with the provider ID CAPI copied once its Node registered, terminated with CAPI's
// words when its provider reported a terminal failure, shutting-down while it is deleted, and absent once gone. A
// Machine whose cluster label was changed is not owned.
func TestDescribeStates(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	id := namespace + "/describe-a"
	if _, err := provider.Create(ctx, launchOf(class, "describe-a", "default", "uid-describe-a")); err != nil {
		t.Fatal(err)
	}
	if got := describe(t, id); got == nil || got.State != cloudprovider.StatePending || got.ProviderID != "" {
		t.Fatalf("new Machine: %+v, want pending without a provider ID", got)
	}

	setStatus(t, "describe-a", func(s *clusterv1.MachineStatus) { s.Phase = string(clusterv1.MachinePhaseProvisioned) })
	if got := describe(t, id); got.State != cloudprovider.StatePending {
		t.Errorf("provisioned Machine without a Node: %s, want pending", got.State)
	}

	m := machineOf(t, "describe-a")
	m.Spec.ProviderID = "test:///rack-a/m-1"
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	setStatus(t, "describe-a", func(s *clusterv1.MachineStatus) {
		s.Phase = string(clusterv1.MachinePhaseRunning)
		s.NodeRef = clusterv1.MachineNodeReference{Name: "node-describe-a"}
	})
	if got := describe(t, id); got.State != cloudprovider.StateRunning || got.ProviderID != "test:///rack-a/m-1" {
		t.Errorf("Machine with its Node: %+v, want running with provider ID test:///rack-a/m-1", got)
	}

	setFailure(t, "describe-a", "the rack is on fire")
	if got := describe(t, id); got.State != cloudprovider.StateTerminated || !strings.Contains(got.EndedAtLaunch, "the rack is on fire") {
		t.Errorf("failed Machine: %s, ended at launch %q; want terminated with CAPI's message", got.State, got.EndedAtLaunch)
	}

	// CAPI's finalizer holds a Machine being deleted until its infrastructure is released.
	m = machineOf(t, "describe-a")
	m.Finalizers = append(m.Finalizers, clusterv1.MachineFinalizer)
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got := describe(t, id); got == nil || got.State != cloudprovider.StateShuttingDown {
		t.Errorf("Machine being deleted: %+v, want shutting-down", got)
	}
	m = machineOf(t, "describe-a")
	m.Finalizers = nil
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got := describe(t, id); got != nil {
		t.Errorf("deleted Machine described as %+v, want absent", got)
	}
}

// A Machine that lost the cluster's label is described as not owned, and no action
// touches it.
func TestDescribeNotOwned(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	id := namespace + "/owned-a"
	if _, err := provider.Create(ctx, launchOf(class, "owned-a", "default", "uid-owned-a")); err != nil {
		t.Fatal(err)
	}
	m := machineOf(t, "owned-a")
	m.Labels[v1beta1.TagCluster] = "another-cluster"
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got := describe(t, id); got == nil || !got.NotOwned {
		t.Errorf("Machine of another cluster: %+v, want NotOwned", got)
	}
	errs, err := provider.TerminateInstances(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(errs[id], cloudprovider.ErrNotOwned) {
		t.Errorf("terminating another cluster's Machine: %v, want NotOwned", errs[id])
	}
	machineOf(t, "owned-a") // still there
}

// Terminate deletes the Machine; terminating one that is gone, or an ID that names no
// Machine, succeeds.
func TestTerminate(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	id := namespace + "/terminate-a"
	if _, err := provider.Create(ctx, launchOf(class, "terminate-a", "default", "uid-terminate-a")); err != nil {
		t.Fatal(err)
	}
	gone := namespace + "/never-launched"
	for range 2 {
		errs, err := provider.TerminateInstances(ctx, []string{id, gone})
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) != 0 {
			t.Errorf("terminate errors %v, want none", errs)
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "terminate-a"}, &clusterv1.Machine{}); err == nil {
		t.Errorf("Machine terminate-a still exists")
	}
	if got := describe(t, id); got != nil {
		t.Errorf("terminated Machine described as %+v, want absent", got)
	}
}

// List finds the cluster's Machines by their tags, in every namespace, and no other
// cluster's.
func TestList(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	for _, l := range []struct{ claim, pool string }{{"list-a", "list-one"}, {"list-b", "list-one"}, {"list-c", "list-two"}} {
		if _, err := provider.Create(ctx, launchOf(class, l.claim, l.pool, "uid-"+l.claim)); err != nil {
			t.Fatal(err)
		}
	}
	m := machineOf(t, "list-b")
	m.Labels[v1beta1.TagCluster] = "another-cluster"
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tags map[string]string
		want []string
	}{
		{map[string]string{v1beta1.TagCluster: clusterName, v1beta1.TagNodePool: "list-one"}, []string{namespace + "/list-a"}},
		{map[string]string{v1beta1.TagCluster: clusterName, v1beta1.TagNodePool: "list-two"}, []string{namespace + "/list-c"}},
		{map[string]string{v1beta1.TagCluster: "another-cluster", v1beta1.TagNodePool: "list-one"}, []string{namespace + "/list-b"}},
	} {
		instances, err := provider.ListInstances(ctx, tt.tags)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, i := range instances {
			got = append(got, i.ID)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("list %v = %v, want %v", tt.tags, got, tt.want)
		}
	}
}
