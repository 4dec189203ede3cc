package runner

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func machine(name, cluster, providerID string, deleting bool) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-sim", Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{v1beta1.TagCluster: cluster, v1beta1.TagNodeClaim: name}}}
	m.Spec.ProviderID = providerID
	if deleting {
		m.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	}
	return m
}

func simMachine(name, providerID string, online *bool, owner *clusterv1.Machine) *unstructured.Unstructured {
	sm := &unstructured.Unstructured{}
	sm.SetGroupVersionKind(simMachineGVK)
	sm.SetNamespace("capi-sim")
	sm.SetName(name)
	if providerID != "" {
		_ = unstructured.SetNestedField(sm.Object, providerID, "spec", "providerID")
	}
	if online != nil {
		_ = unstructured.SetNestedField(sm.Object, *online, "spec", "online")
	}
	if owner != nil {
		sm.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: owner.Name, UID: owner.UID}})
	}
	return sm
}

func TestMachineWatchCountsTheOperatorsWrites(t *testing.T) {
	w := newMachineWatch("sim")
	machines := w.machineHandler()
	a, b, foreign := machine("a", "sim", "", false), machine("b", "sim", "", false), machine("x", "other", "", false)
	for _, m := range []*clusterv1.Machine{a, b, foreign} {
		machines.OnAdd(m, false)
	}
	// a is deleted in two steps (a finalizer holds it), b vanishes at once; each counts once.
	machines.OnUpdate(a, machine("a", "sim", "", true))
	machines.OnUpdate(machine("a", "sim", "", true), machine("a", "sim", "", true))
	machines.OnDelete(machine("a", "sim", "", true))
	machines.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "capi-sim/b", Obj: b})
	machines.OnDelete(foreign)

	off, on := false, true
	power := w.simMachineHandler()
	before := time.Now()
	power.OnUpdate(simMachine("a", "fake:///fake-1a/i-0a", nil, nil), simMachine("a", "fake:///fake-1a/i-0a", &off, nil))
	power.OnUpdate(simMachine("a", "fake:///fake-1a/i-0a", &off, nil), simMachine("a", "fake:///fake-1a/i-0a", &off, nil))
	power.OnUpdate(simMachine("a", "fake:///fake-1a/i-0a", &off, nil), simMachine("a", "fake:///fake-1a/i-0a", &on, nil))

	want := map[string]int{callCreateMachine: 2, callDeleteMachine: 2, callPowerOff: 1, callPowerOn: 1}
	got := w.calls()
	if len(got) != len(want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	for call, n := range want {
		if got[call] != n {
			t.Errorf("%s: %d, want %d (all: %v)", call, got[call], n, got)
		}
	}
	starts := w.startCalls()
	if len(starts) != 1 || len(starts[0].ids) != 1 || starts[0].ids[0] != "i-0a" || starts[0].at.Before(before) {
		t.Errorf("start calls %+v, want the power-on of i-0a", starts)
	}
}

func TestOwnedInstancesShowMachinesAndLeakedMachines(t *testing.T) {
	running := machine("running", "sim", "fake:///fake-1a/i-01", false)
	young := machine("young", "sim", "", false) // CAPI has not copied the provider ID yet
	gone := machine("gone", "sim", "fake:///fake-1a/i-03", true)
	simMachines := []unstructured.Unstructured{
		*simMachine("young", "fake:///fake-1b/i-02", nil, young),
		*simMachine("gone", "fake:///fake-1a/i-03", nil, gone),
		*simMachine("orphan", "fake:///fake-1c/i-04", nil, nil),
	}
	instances := []cloudprovider.Instance{
		{ID: "i-01", ProviderID: "fake:///fake-1a/i-01", State: cloudprovider.StateRunning},
		{ID: "i-02", ProviderID: "fake:///fake-1b/i-02", State: cloudprovider.StatePending},
		// The deleted Machine's instance still runs: a leak; so does one no SimMachine has.
		{ID: "i-03", ProviderID: "fake:///fake-1a/i-03", State: cloudprovider.StateRunning},
		{ID: "i-04", ProviderID: "fake:///fake-1c/i-04", State: cloudprovider.StateStopped},
		{ID: "i-05", ProviderID: "fake:///fake-1c/i-05", State: cloudprovider.StateTerminated},
	}
	owned := ownedInstances("sim", []clusterv1.Machine{*running, *young, *gone}, simMachines, instances)

	byID := map[string]cloudprovider.Instance{}
	for _, inst := range owned {
		byID[inst.ID] = inst
	}
	if len(owned) != 5 || len(byID) != 5 {
		t.Fatalf("owned %+v, want the 3 Machines and the 2 leaked instances", owned)
	}
	if m := byID["capi-sim/running"]; m.State != cloudprovider.StateRunning || m.ProviderID != "fake:///fake-1a/i-01" || m.Tags[v1beta1.TagNodeClaim] != "running" {
		t.Errorf("a running Machine shows as %+v", m)
	}
	if m := byID["capi-sim/gone"]; m.State != cloudprovider.StateShuttingDown {
		t.Errorf("a Machine being deleted shows as %+v, want shutting-down", m)
	}
	for _, id := range []string{"i-03", "i-04"} {
		if leak, ok := byID[id]; !ok || leak.Tags[v1beta1.TagCluster] != "sim" || leak.Tags[v1beta1.TagNodeClaim] != "" {
			t.Errorf("instance %s with no live Machine: %+v, want a leak of the cluster", id, leak)
		}
	}
	for _, id := range []string{"i-01", "i-02", "i-05"} {
		if _, ok := byID[id]; ok {
			t.Errorf("instance %s is a leak, but a Machine accounts for it or it is gone", id)
		}
	}
}
