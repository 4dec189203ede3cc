package runner

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The operator's calls on clusterapi, as the simulator counts them: it calls no cloud,
// it writes CAPI's objects, and these are the writes that a cloud call stands for.
const (
	// callCreateMachine: a Machine of the cluster appeared.
	callCreateMachine = "CreateMachine"
	// callDeleteMachine: a Machine of the cluster began to be deleted.
	callDeleteMachine = "DeleteMachine"
	// callPowerOff and callPowerOn: a SimMachine's spec.online turned false or true.
	callPowerOff = "PowerOff"
	callPowerOn  = "PowerOn"
)

// machineWatch counts the operator's writes to CAPI's objects from the simulator's
// informers, as the fake cloud counts its calls: Machines created and deleted, and
// SimMachines powered off and on. A power-on is the start call of a standby machine,
// timed when the simulator sees it, for the start-call latency and the serving path.
type machineWatch struct {
	cluster string

	mu       sync.Mutex
	counts   map[string]int
	deleting map[string]bool
	starts   []startCall
}

func newMachineWatch(cluster string) *machineWatch {
	return &machineWatch{cluster: cluster, counts: map[string]int{}, deleting: map[string]bool{}}
}

func (w *machineWatch) count(call string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts[call]++
}

func (w *machineWatch) calls() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.counts))
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

func (w *machineWatch) startCalls() []startCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]startCall(nil), w.starts...)
}

// ours reports whether a Machine is one the operator made for the simulated cluster.
func (w *machineWatch) ours(m *clusterv1.Machine) bool {
	return m.Labels[v1beta1.TagCluster] == w.cluster
}

// machineHandler counts Machines created and deleted, each deletion once: from the first
// sight of its deletion timestamp, or from its disappearance if that came first.
func (w *machineWatch) machineHandler() toolscache.ResourceEventHandler {
	deleted := func(m *clusterv1.Machine) {
		key := m.Namespace + "/" + m.Name
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.deleting[key] {
			w.deleting[key] = true
			w.counts[callDeleteMachine]++
		}
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			if m, ok := obj.(*clusterv1.Machine); ok && w.ours(m) {
				w.count(callCreateMachine)
				if m.DeletionTimestamp != nil {
					deleted(m)
				}
			}
		},
		UpdateFunc: func(_, obj any) {
			if m, ok := obj.(*clusterv1.Machine); ok && w.ours(m) && m.DeletionTimestamp != nil {
				deleted(m)
			}
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if m, ok := obj.(*clusterv1.Machine); ok && w.ours(m) {
				deleted(m)
			}
		},
	}
}

// simMachineHandler counts power changes of SimMachines: spec.online, true unless set.
func (w *machineWatch) simMachineHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*unstructured.Unstructured)
			now, ok2 := newObj.(*unstructured.Unstructured)
			if !ok1 || !ok2 || online(old) == online(now) {
				return
			}
			if !online(now) {
				w.count(callPowerOff)
				return
			}
			providerID, _, _ := unstructured.NestedString(now.Object, "spec", "providerID")
			w.mu.Lock()
			defer w.mu.Unlock()
			w.counts[callPowerOn]++
			if id := instanceOf(providerID); id != "" {
				w.starts = append(w.starts, startCall{at: time.Now(), ids: []string{id}})
			}
		},
	}
}

// online is a SimMachine's power wish, spec.online, which defaults to true.
func online(simMachine *unstructured.Unstructured) bool {
	on, found, err := unstructured.NestedBool(simMachine.Object, "spec", "online")
	return !found || err != nil || on
}

// listOwned lists the cluster's Machines and every SimMachine for ownedInstances.
func listOwned(ctx context.Context, c client.Reader, cluster string) ([]clusterv1.Machine, []unstructured.Unstructured, error) {
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.MatchingLabels{v1beta1.TagCluster: cluster}); err != nil {
		return nil, nil, err
	}
	simMachines := &unstructured.UnstructuredList{}
	simMachines.SetGroupVersionKind(simMachineGVK.GroupVersion().WithKind(simMachineGVK.Kind + "List"))
	if err := c.List(ctx, simMachines); err != nil {
		return nil, nil, err
	}
	return machines.Items, simMachines.Items, nil
}

// ownedInstances are the instances the invariants hold the operator to on clusterapi:
// each Machine of the cluster is an instance of ID namespace/name, as the provider's, and
// each live instance of the fake cloud that no live Machine accounts for (through its
// provider ID, or its SimMachine's while CAPI has not copied it yet) is a leak, one of
// the cluster's that no claim owns.
func ownedInstances(cluster string, machines []clusterv1.Machine, simMachines []unstructured.Unstructured, running []cloudprovider.Instance) []cloudprovider.Instance {
	var out []cloudprovider.Instance
	accounted := map[string]bool{}
	alive := map[string]bool{}
	for _, m := range machines {
		state := cloudprovider.StateRunning
		if m.DeletionTimestamp != nil {
			state = cloudprovider.StateShuttingDown
		} else {
			alive[string(m.UID)] = true
			if m.Spec.ProviderID != "" {
				accounted[m.Spec.ProviderID] = true
			}
		}
		out = append(out, cloudprovider.Instance{
			ID: m.Namespace + "/" + m.Name, ProviderID: m.Spec.ProviderID, Tags: m.Labels, State: state,
			Type: m.Labels[corev1.LabelInstanceTypeStable], Zone: m.Spec.FailureDomain, LaunchTime: m.CreationTimestamp.Time,
		})
	}
	for _, sm := range simMachines {
		providerID, _, _ := unstructured.NestedString(sm.Object, "spec", "providerID")
		for _, ref := range sm.GetOwnerReferences() {
			if ref.Kind == "Machine" && alive[string(ref.UID)] && providerID != "" {
				accounted[providerID] = true
			}
		}
	}
	for _, inst := range running {
		if inst.State == cloudprovider.StateShuttingDown || inst.State == cloudprovider.StateTerminated || accounted[inst.ProviderID] {
			continue
		}
		leak := inst
		leak.Tags = map[string]string{v1beta1.TagCluster: cluster}
		out = append(out, leak)
	}
	return out
}
