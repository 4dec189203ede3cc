package capiprovider_test

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// online reads a SimMachine's spec.online.
func online(t *testing.T, name string) bool {
	t.Helper()
	value, found, err := unstructured.NestedBool(objectOf(t, simMachineKind, name).Object, "spec", "online")
	if err != nil || !found {
		t.Fatalf("SimMachine %s has no spec.online: %v", name, err)
	}
	return value
}

// setPoweredOn writes a SimMachine's status.poweredOn as its infrastructure would.
func setPoweredOn(t *testing.T, name string, on bool) {
	t.Helper()
	sim := objectOf(t, simMachineKind, name)
	if err := unstructured.SetNestedField(sim.Object, on, "status", "poweredOn"); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(context.Background(), sim); err != nil {
		t.Fatalf("updating SimMachine %s's status: %v", name, err)
	}
}

// act runs a batch action on one instance and returns its error.
func act(t *testing.T, call func(context.Context, []string) (map[string]error, error), id string) error {
	t.Helper()
	errs, err := call(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	return errs[id]
}

// On the simulator's SimMachine, stop and start switch spec.online, and the instance's
// state follows status.poweredOn: stopping until the machine is off, stopped, then
// pending once asked to start until it is on again, and running with its Node.
func TestPower(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(simTemplateKind, simTemplate))
	id := namespace + "/power-a"
	if _, err := provider.Create(ctx, launchOf(class, "power-a", "default", "uid-power-a")); err != nil {
		t.Fatal(err)
	}
	setPoweredOn(t, "power-a", true)
	setStatus(t, "power-a", func(s *clusterv1.MachineStatus) {
		s.Phase = string(clusterv1.MachinePhaseRunning)
		s.NodeRef = clusterv1.MachineNodeReference{Name: "node-power-a"}
	})
	if got := describe(t, id); got.State != cloudprovider.StateRunning {
		t.Fatalf("powered-on SimMachine with its Node: %s, want running", got.State)
	}

	stop := func(ctx context.Context, ids []string) (map[string]error, error) {
		return provider.StopInstances(ctx, ids, false)
	}
	if err := act(t, stop, id); err != nil {
		t.Fatal(err)
	}
	if online(t, "power-a") {
		t.Errorf("stopped SimMachine still has spec.online true")
	}
	if got := describe(t, id); got.State != cloudprovider.StateStopping {
		t.Errorf("SimMachine asked off, still on: %s, want stopping", got.State)
	}
	setPoweredOn(t, "power-a", false)
	if got := describe(t, id); got.State != cloudprovider.StateStopped {
		t.Errorf("SimMachine off: %s, want stopped", got.State)
	}
	if err := act(t, stop, id); err != nil {
		t.Errorf("stopping a stopped machine: %v, want nothing done", err)
	}

	if err := act(t, provider.StartInstances, id); err != nil {
		t.Fatal(err)
	}
	if !online(t, "power-a") {
		t.Errorf("started SimMachine has spec.online false")
	}
	if got := describe(t, id); got.State != cloudprovider.StatePending {
		t.Errorf("SimMachine asked on, still off: %s, want pending", got.State)
	}
	setPoweredOn(t, "power-a", true)
	if got := describe(t, id); got.State != cloudprovider.StateRunning {
		t.Errorf("SimMachine on again: %s, want running", got.State)
	}

	if err := act(t, provider.ForceStopInstances, id); err != nil {
		t.Fatal(err)
	}
	if online(t, "power-a") {
		t.Errorf("force-stopped SimMachine still has spec.online true")
	}

	hibernate := func(ctx context.Context, ids []string) (map[string]error, error) {
		return provider.StopInstances(ctx, ids, true)
	}
	if err := act(t, hibernate, id); !errors.Is(err, cloudprovider.ErrUnsupported) {
		t.Errorf("hibernating: %v, want Unsupported", err)
	}
}

// An infrastructure kind Stratos has no power interface for cannot be stopped or
// started: Unsupported, per instance.
func TestPowerUnsupported(t *testing.T) {
	ctx := context.Background()
	class := classOver(ref(machineTemplateKind, machineTemplate))
	id := namespace + "/nopower-a"
	if _, err := provider.Create(ctx, launchOf(class, "nopower-a", "default", "uid-nopower-a")); err != nil {
		t.Fatal(err)
	}
	stop := func(ctx context.Context, ids []string) (map[string]error, error) {
		return provider.StopInstances(ctx, ids, false)
	}
	for name, call := range map[string]func(context.Context, []string) (map[string]error, error){
		"start": provider.StartInstances, "stop": stop, "force stop": provider.ForceStopInstances,
	} {
		if err := act(t, call, id); !errors.Is(err, cloudprovider.ErrUnsupported) {
			t.Errorf("%s: %v, want Unsupported", name, err)
		}
	}
	if err := act(t, provider.StartInstances, namespace+"/never-launched"); !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Errorf("starting a Machine that does not exist: %v, want NotFound", err)
	}
}
