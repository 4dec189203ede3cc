package clusterapi_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/test/stack"
)

// nodeclaimOptions are test/stack's: fast polls, a short grace for garbage collection.
func nodeclaimOptions() nodeclaim.Options {
	return nodeclaim.Options{
		ClusterName:         stack.ClusterName,
		PrePullNamespace:    stack.PrePullNamespace,
		LaunchTimeout:       time.Minute,
		RegistrationTimeout: time.Minute,
		PollInterval:        100 * time.Millisecond,
		LaunchBackoffBase:   100 * time.Millisecond,
		LaunchBackoffMax:    time.Second,
		ResyncInterval:      time.Second,
		GCInterval:          500 * time.Millisecond,
		GCGracePeriod:       time.Second,
	}
}

// pool is a pool of the simulated cluster's class with no warm pool, removed with its
// claims, Machines and Nodes when the test ends (before its operator stops).
func pool(f *stack.Fixture, name string) {
	f.T.Helper()
	f.Pool(name, 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef = v1beta1.NodeClassReference{Kind: "ClusterAPINodeClass", Name: simClass}
		p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/pool": v1beta1.LabelValue(name)}
		p.Spec.Standby.Warmup = v1beta1.Warmup{}
	})
	f.T.Cleanup(func() { removePool(f, name) })
}

// removePool deletes the pool and waits until its claims and Machines are gone. A test
// that starts an operator after it made the pool removes it itself: its cleanups stop
// the latest operator first.
func removePool(f *stack.Fixture, name string) {
	f.T.Helper()
	p := &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := f.Env.Client.Delete(f.Ctx, p); err != nil && !apierrors.IsNotFound(err) {
		f.T.Errorf("deleting pool %s: %v", name, err)
	}
	f.Eventually("pool "+name+"'s claims and Machines are gone", func() bool {
		return len(f.Claims(name)) == 0 && len(machinesOf(f, name)) == 0
	})
}

// pendingPod is a pod for the pool that kube-scheduler found no node for.
func pendingPod(f *stack.Fixture, pool string) *corev1.Pod {
	f.T.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: pool + "-app"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"example.com/pool": pool},
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			}}},
		},
	}
	f.Create(pod)
	f.MarkUnschedulable(pod)
	f.T.Cleanup(func() { _ = f.Env.Client.Delete(f.Ctx, pod, client.GracePeriodSeconds(0)) })
	return pod
}

// machinesOf are the Machines Stratos made for the pool's claims.
func machinesOf(f *stack.Fixture, pool string) []clusterv1.Machine {
	f.T.Helper()
	list := &clusterv1.MachineList{}
	if err := f.Env.Client.List(f.Ctx, list, client.InNamespace(simNamespace), client.MatchingLabels{v1beta1.TagNodePool: pool}); err != nil {
		f.T.Fatal(err)
	}
	return list.Items
}

// machineOf is the claim's Machine: its instance, namespace/name, in the cluster's namespace.
func machineOf(f *stack.Fixture, claim *v1beta1.NodeClaim) *clusterv1.Machine {
	f.T.Helper()
	m := &clusterv1.Machine{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Namespace: simNamespace, Name: claim.Name}, m); err != nil {
		f.T.Fatalf("the Machine of claim %s: %v", claim.Name, err)
	}
	if want := simNamespace + "/" + claim.Name; claim.Status.InstanceID != want {
		f.T.Fatalf("claim %s's instance is %q, want its Machine %s", claim.Name, claim.Status.InstanceID, want)
	}
	return m
}

// bind binds the pod to the node, as kube-scheduler would once the node fits it.
func bind(f *stack.Fixture, pod *corev1.Pod, node string) {
	f.T.Helper()
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := f.Env.Client.SubResource("binding").Create(f.Ctx, pod, binding); err != nil {
		f.T.Fatalf("binding pod %s to %s: %v", pod.Name, node, err)
	}
}

// A pending pod makes a claim whose instance is a CAPI Machine; CAPI's controllers and
// the simulator's providers boot it, its Node registers with the Machine's provider ID,
// CAPI links the Machine to it, and the pod runs there.
func TestAPendingPodGetsAMachineWhoseNodeServesIt(t *testing.T) {
	f := newFixture(t)
	pool(f, "capi-serve")
	pod := pendingPod(f, "capi-serve")

	claim := f.WaitForPhase("capi-serve", 1, v1beta1.PhaseRunning)[0]
	machine := machineOf(f, &claim)
	f.Eventually("CAPI links the Machine to its Node", func() bool {
		machine = machineOf(f, &claim)
		return machine.Status.NodeRef.IsDefined() && machine.Status.Phase == string(clusterv1.MachinePhaseRunning)
	})
	node := f.Node(claim.Status.NodeName)
	if machine.Status.NodeRef.Name != node.Name || machine.Spec.ProviderID == "" || node.Spec.ProviderID != machine.Spec.ProviderID {
		t.Fatalf("the claim's Node %s has provider ID %q; its Machine's node is %q with provider ID %q", node.Name, node.Spec.ProviderID, machine.Status.NodeRef.Name, machine.Spec.ProviderID)
	}
	if got := machine.Labels[v1beta1.LabelNodeClaim]; got != claim.Name {
		t.Errorf("the Machine is labelled for claim %q, want %s", got, claim.Name)
	}
	bind(f, pod, node.Name)
	f.Eventually("the pod runs on the Machine's Node", func() bool {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatal(err)
		}
		return pod.Status.Phase == corev1.PodRunning && pod.Spec.NodeName == node.Name
	})
}

// Deleting a claim deletes its Machine, and CAPI deletes the Machine's bootstrap config
// and infrastructure machine, whose instance the simulator terminates.
func TestDeletingTheClaimDeletesItsMachine(t *testing.T) {
	f := newFixture(t)
	pool(f, "capi-delete")
	pendingPod(f, "capi-delete")
	claim := f.WaitForPhase("capi-delete", 1, v1beta1.PhaseRunning)[0]
	machine := machineOf(f, &claim)
	key := client.ObjectKeyFromObject(machine)
	infra := &v1alpha1.SimMachine{}
	if err := c.Get(f.Ctx, key, infra); err != nil {
		t.Fatalf("the Machine's SimMachine: %v", err)
	}
	providerID := infra.Spec.ProviderID

	if err := f.Env.Client.Delete(f.Ctx, &claim); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the Machine, its SimConfig and its SimMachine are gone", func() bool {
		return !exists(f, key, &clusterv1.Machine{}) && !exists(f, key, &v1alpha1.SimConfig{}) && !exists(f, key, &v1alpha1.SimMachine{})
	})
	f.Eventually("the claim and its Node are gone", func() bool {
		claimErr := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(&claim), &v1beta1.NodeClaim{})
		nodeErr := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Status.NodeName}, &corev1.Node{})
		return apierrors.IsNotFound(claimErr) && apierrors.IsNotFound(nodeErr)
	})
	f.Eventually("the SimMachine's instance is terminated", func() bool {
		for _, i := range cloud.Instances() {
			if i.ProviderID == providerID {
				return i.State == cloudprovider.StateTerminated
			}
		}
		return true // The cloud forgets terminated instances after a while.
	})
}

// An operator that stops after it created a claim's Machine but before the Machine's
// bootstrap config and infrastructure machine leaves a launch in flight; the next
// operator adopts it: it makes what is missing, and the claim reaches Running on that
// Machine, the only one. The first operator's provider fails every create of the
// simulator's kinds, as if the process ended there.
func TestARestartedOperatorAdoptsAMachineInFlight(t *testing.T) {
	f := newFixture(t)
	f.Op.Stop()
	crashed := make(chan struct{})
	var once sync.Once
	f.Op = startOperatorOn(t, f.Opts, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetObjectKind().GroupVersionKind().Group == v1alpha1.Group {
				once.Do(func() { close(crashed) })
				return errors.New("the operator ended before it created " + obj.GetName())
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	pool(f, "capi-adopt")
	pendingPod(f, "capi-adopt")
	select {
	case <-crashed:
	case <-time.After(time.Minute):
		t.Fatal("the operator did not launch a Machine within a minute")
	}
	f.Op.Stop()

	machines := machinesOf(f, "capi-adopt")
	claims := f.Claims("capi-adopt")
	if len(machines) != 1 || len(claims) != 1 || claims[0].Status.Phase == v1beta1.PhaseRunning {
		t.Fatalf("when the operator stopped, the pool had Machines %v and claims %d (the first %+v); want one of each, not Running", names(machines), len(claims), claims)
	}
	inFlight := machines[0]
	key := client.ObjectKeyFromObject(&inFlight)
	if exists(f, key, &v1alpha1.SimConfig{}) || exists(f, key, &v1alpha1.SimMachine{}) {
		t.Fatal("the Machine in flight has its SimConfig or SimMachine already")
	}

	f.Op = startOperator(t, f.Opts)
	claim := f.WaitForClaim(claims[0].Name, v1beta1.PhaseRunning)
	machines = machinesOf(f, "capi-adopt")
	if len(machines) != 1 || machines[0].UID != inFlight.UID || machineOf(f, claim).UID != inFlight.UID {
		t.Fatalf("after the restart the pool has Machines %v; want only %s, in flight when the operator stopped", names(machines), names([]clusterv1.Machine{inFlight}))
	}
	if !exists(f, key, &v1alpha1.SimConfig{}) || !exists(f, key, &v1alpha1.SimMachine{}) {
		t.Fatal("the adopted Machine lacks its SimConfig or SimMachine")
	}
	removePool(f, "capi-adopt")
}

// exists reads obj of key with the package's client, which knows the simulator's kinds.
func exists(f *stack.Fixture, key client.ObjectKey, obj client.Object) bool {
	f.T.Helper()
	err := c.Get(f.Ctx, key, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		f.T.Fatal(err)
	}
	return err == nil
}

// A Machine labelled as Stratos's, for this cluster, whose claim does not exist (left by
// a launch whose claim went away with the operator down) is deleted by the garbage
// collector; one labelled for another Stratos cluster is left alone.
func TestALeakedMachineIsCollected(t *testing.T) {
	f := newFixture(t)
	leaked, foreign := strayMachine("leaked", stack.ClusterName), strayMachine("foreign", "another-cluster")
	// The foreign Machine goes first, so that it is as old as the leaked one.
	f.Create(foreign)
	t.Cleanup(func() { _ = f.Env.Client.Delete(f.Ctx, foreign) })
	f.Create(leaked)
	f.Eventually("the leaked Machine is deleted", func() bool { return !exists(f, client.ObjectKeyFromObject(leaked), &clusterv1.Machine{}) })
	if !exists(f, client.ObjectKeyFromObject(foreign), &clusterv1.Machine{}) {
		t.Fatal("the Machine of another Stratos cluster was deleted too")
	}
}

// strayMachine is a Machine of the simulated cluster labelled as the Stratos of cluster
// would label it, for a claim that does not exist.
func strayMachine(name, cluster string) *clusterv1.Machine {
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: simNamespace, Name: name, Labels: map[string]string{
			v1beta1.TagCluster: cluster, v1beta1.TagNodePool: "gone", v1beta1.TagNodeClaim: name,
			clusterv1.ClusterNameLabel: simCluster,
		}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       simCluster,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: new(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimMachine, Name: name},
		},
	}
}

func names(machines []clusterv1.Machine) []string {
	var out []string
	for _, m := range machines {
		out = append(out, m.Name+" ("+string(m.UID)+")")
	}
	return out
}
