package runner

import (
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// WorkloadLabel marks the pods of the scenario's bursts; its value is the workload's
// name. Only these pods count as the scenario's pods.
const WorkloadLabel = "sim.stratos.sh/workload"

// podTimes is what the observer saw of one workload pod, in wall time.
type podTimes struct {
	created, unschedulable, running time.Time
	// deleted is when the pod's deletion was first seen: its deletionTimestamp, or its
	// removal.
	deleted  time.Time
	nodeName string
	// owner is the pod's workload, namespace/name.
	owner string
}

// capacityCounts counts, since the scenario began, how pods got capacity.
type capacityCounts struct {
	// startedFromStandby are claims asked to run once warm: standby (or stopping into it).
	startedFromStandby int
	// takenWhileWarming are claims the pool launched for standby that were asked to run
	// before their warmup ended: capacity already on its way, not warm capacity.
	takenWhileWarming int
	// launchedCold are claims created to run pods.
	launchedCold int
	// claimsCreated are every claim created: to run pods or for the warm pool.
	claimsCreated int
	// daemonSetPodsDeleted are the DaemonSet pods deleted: none should be, from the
	// Nodes of stopped instances above all.
	daemonSetPodsDeleted int
}

// warmingPhases are those of a claim launched for standby that has not finished its
// warmup yet.
var warmingPhases = map[v1beta1.NodeClaimPhase]bool{
	"": true, v1beta1.PhaseLaunching: true, v1beta1.PhaseRegistering: true,
	v1beta1.PhaseInitializing: true, v1beta1.PhaseWarmingUp: true,
}

// observer records, from informer events, when things happened: pods created, marked
// Unschedulable and Running; standby claims asked to start; claims created to run pods.
// Event handlers run in the informers' goroutines, so everything is behind a lock.
type observer struct {
	mu   sync.Mutex
	pods map[string]*podTimes
	// names are the workload pods seen, as namespace/name.
	names    map[string]bool
	capacity capacityCounts
	// warmInstances are the instances of the claims started from standby.
	warmInstances map[string]bool
	// registrations are the Node objects seen, by name, in the order they appeared; they
	// outlive the Nodes, as the report is made after the scenario terminated some.
	registrations map[string][]nodeRegistration
}

func newObserver() *observer {
	return &observer{
		pods: map[string]*podTimes{}, names: map[string]bool{}, warmInstances: map[string]bool{},
		registrations: map[string][]nodeRegistration{},
	}
}

// nodeHandler records when each Node registered. Nodes there before the watch began
// were there before any pod of the scenario: they count as registered at the zero time.
func (o *observer) nodeHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			node, ok := obj.(*corev1.Node)
			if !ok {
				return
			}
			registered := time.Now()
			if initial {
				registered = time.Time{}
			}
			o.mu.Lock()
			o.registrations[node.Name] = append(o.registrations[node.Name], nodeRegistration{at: registered, providerID: node.Spec.ProviderID})
			o.mu.Unlock()
		},
		// A kubelet may set its provider ID after it registers.
		UpdateFunc: func(_, obj any) {
			node, ok := obj.(*corev1.Node)
			if !ok || node.Spec.ProviderID == "" {
				return
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			if seen := o.registrations[node.Name]; len(seen) > 0 && seen[len(seen)-1].providerID == "" {
				seen[len(seen)-1].providerID = node.Spec.ProviderID
			}
		},
	}
}

func (o *observer) podHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.observePod(obj) },
		UpdateFunc: func(_, obj any) { o.observePod(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			pod, ok := obj.(*corev1.Pod)
			if !ok {
				return
			}
			if podutil.OwnedByDaemonSet(pod) {
				o.mu.Lock()
				o.capacity.daemonSetPodsDeleted++
				o.mu.Unlock()
			}
			if pod.Labels[WorkloadLabel] != "" {
				o.mu.Lock()
				if t, seen := o.pods[podKey(pod)]; seen && t.deleted.IsZero() {
					t.deleted = time.Now()
				}
				o.mu.Unlock()
			}
		},
	}
}

func (o *observer) observePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[WorkloadLabel] == "" {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	key := podKey(pod)
	o.names[pod.Namespace+"/"+pod.Name] = true
	t, seen := o.pods[key]
	if !seen {
		t = &podTimes{created: now, owner: pod.Namespace + "/" + pod.Labels[WorkloadLabel]}
		o.pods[key] = t
	}
	if t.deleted.IsZero() && pod.DeletionTimestamp != nil {
		t.deleted = now
	}
	if t.unschedulable.IsZero() && isUnschedulable(pod) {
		t.unschedulable = now
	}
	if pod.Spec.NodeName != "" {
		t.nodeName = pod.Spec.NodeName
	}
	if t.running.IsZero() && isRunning(pod) {
		t.running = now
	}
}

func (o *observer) claimHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			claim, ok := obj.(*v1beta1.NodeClaim)
			if ok && !initial {
				o.mu.Lock()
				o.capacity.claimsCreated++
				o.mu.Unlock()
			}
			// A claim created to run pods starts with desiredState Running; the pool's
			// warm-up creates Standby ones.
			if ok && !initial && claim.Spec.DesiredState == v1beta1.DesiredRunning && claim.Status.Phase == "" {
				o.mu.Lock()
				o.capacity.launchedCold++
				o.mu.Unlock()
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*v1beta1.NodeClaim)
			claim, ok2 := newObj.(*v1beta1.NodeClaim)
			if ok1 && ok2 && old.Spec.DesiredState == v1beta1.DesiredStandby && claim.Spec.DesiredState == v1beta1.DesiredRunning {
				o.mu.Lock()
				if warmingPhases[old.Status.Phase] {
					o.capacity.takenWhileWarming++
				} else {
					o.capacity.startedFromStandby++
					o.warmInstances[old.Status.InstanceID] = true
					// On clusterapi the claim's instance is a Machine, while the start
					// calls and the Nodes name the machine the infrastructure runs: its
					// provider ID's.
					if id := instanceOf(old.Status.ProviderID); id != "" {
						o.warmInstances[id] = true
					}
				}
				o.mu.Unlock()
			}
		},
	}
}

// counters returns how pods got capacity so far.
func (o *observer) counters() capacityCounts {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.capacity
}

// startedFromStandby reports whether an instance is that of a claim started from standby.
func (o *observer) startedFromStandby(instanceID string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.warmInstances[instanceID]
}

// nodeRegistrations returns a copy of the Node registrations seen, by name.
func (o *observer) nodeRegistrations() map[string][]nodeRegistration {
	o.mu.Lock()
	defer o.mu.Unlock()
	all := make(map[string][]nodeRegistration, len(o.registrations))
	for name, seen := range o.registrations {
		all[name] = slices.Clone(seen)
	}
	return all
}

// seenPod reports whether a workload pod named namespace/name was seen.
func (o *observer) seenPod(namespacedName string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.names[namespacedName]
}

// podKey is how the observer keys a pod: namespace/name/uid, as a name comes back
// with another pod.
func podKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name + "/" + string(pod.UID)
}

// podTimesByKey returns a copy of what was seen of every workload pod, by podKey.
func (o *observer) podTimesByKey() map[string]podTimes {
	o.mu.Lock()
	defer o.mu.Unlock()
	all := make(map[string]podTimes, len(o.pods))
	for key, t := range o.pods {
		all[key] = *t
	}
	return all
}

// podTimes returns a copy of what was seen of every workload pod.
func (o *observer) podTimes() []podTimes {
	o.mu.Lock()
	defer o.mu.Unlock()
	all := make([]podTimes, 0, len(o.pods))
	for _, t := range o.pods {
		all = append(all, *t)
	}
	return all
}

func isUnschedulable(pod *corev1.Pod) bool {
	scheduled := podutil.Condition(pod, corev1.PodScheduled)
	return scheduled != nil && scheduled.Status == corev1.ConditionFalse && scheduled.Reason == corev1.PodReasonUnschedulable
}

// isRunning is what a user waits for: the pod Running and Ready.
func isRunning(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	ready := podutil.Condition(pod, corev1.PodReady)
	return ready != nil && ready.Status == corev1.ConditionTrue
}
