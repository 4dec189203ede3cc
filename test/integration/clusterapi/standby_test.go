package clusterapi_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/test/stack"
)

// A standby node on the simulator's power-capable infrastructure: the class says it can
// stand by, the pool's standby claim boots a Machine whose SimMachine Stratos then
// powers off (spec.online false: the instance stops, the Machine stays), and a pending
// pod has it powered on again, the same Machine and Node serving the pod.
func TestAStandbyMachinePowersOffAndStartsForAPod(t *testing.T) {
	f := newFixture(t)
	class := &v1beta1.ClusterAPINodeClass{}
	if err := c.Get(f.Ctx, client.ObjectKey{Name: simClass}, class); err != nil {
		t.Fatal(err)
	}
	if class.Status.Standby != v1beta1.ClusterAPIStandbySupported {
		t.Fatalf("the class's standby is %q, want %s: SimMachines can be powered off", class.Status.Standby, v1beta1.ClusterAPIStandbySupported)
	}
	standbyPool(f, "capi-standby")

	claim := f.WaitForPhase("capi-standby", 1, v1beta1.PhaseStandby)[0]
	machine := machineOf(f, &claim)
	infra := &v1alpha1.SimMachine{}
	if err := c.Get(f.Ctx, client.ObjectKeyFromObject(machine), infra); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(infra.Spec.Online, true) || infra.Status.PoweredOn {
		t.Fatalf("the standby claim's SimMachine has online %v, poweredOn %v; want both false", infra.Spec.Online, infra.Status.PoweredOn)
	}
	if state := instanceState(infra.Spec.ProviderID); state != cloudprovider.StateStopped {
		t.Fatalf("the standby claim's instance is %q, want stopped", state)
	}

	pod := pendingPod(f, "capi-standby")
	started := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	if got := machineOf(f, started); got.UID != machine.UID {
		t.Fatalf("the started claim's Machine is %s, want %s, the one that stood by", got.UID, machine.UID)
	}
	if err := c.Get(f.Ctx, client.ObjectKeyFromObject(machine), infra); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(infra.Spec.Online, true) || !infra.Status.PoweredOn || instanceState(infra.Spec.ProviderID) != cloudprovider.StateRunning {
		t.Fatalf("the started claim's SimMachine has online %v, poweredOn %v, instance %q; want it on and running", infra.Spec.Online, infra.Status.PoweredOn, instanceState(infra.Spec.ProviderID))
	}
	bind(f, pod, started.Status.NodeName)
	f.Eventually("the pod runs on the started node", func() bool {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatal(err)
		}
		return pod.Status.Phase == corev1.PodRunning
	})
}

// standbyPool is a pool of the simulated cluster's class that keeps one node on standby.
func standbyPool(f *stack.Fixture, name string) {
	f.T.Helper()
	f.Pool(name, 1, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef = v1beta1.NodeClassReference{Kind: "ClusterAPINodeClass", Name: simClass}
		p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/pool": v1beta1.LabelValue(name)}
		p.Spec.Standby.Warmup = v1beta1.Warmup{}
	})
	f.T.Cleanup(func() { removePool(f, name) })
}

// instanceState is the state of the fake cloud's instance of that provider ID.
func instanceState(providerID string) cloudprovider.InstanceState {
	for _, i := range cloud.Instances() {
		if i.ProviderID == providerID {
			return i.State
		}
	}
	return ""
}
