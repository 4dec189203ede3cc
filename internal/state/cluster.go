// Package state is Stratos's in-memory picture of the cluster, kept up to date by
// informer events rather than List calls: Nodes, the pods bound to each Node, the pods
// waiting for capacity, NodeClaims, DaemonSets, PodDisruptionBudgets, and the pods
// provisioning nominated to claims. Provisioning and disruption take a consistent
// snapshot of it for each decision.
package state

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// Cluster is the picture. It is safe for concurrent use.
type Cluster struct {
	clock clock.PassiveClock
	// prePullNamespace is where Stratos creates its pre-pull pods (podutil.PrePull).
	prePullNamespace string

	mu         sync.RWMutex
	nodes      map[string]*corev1.Node
	podsByNode map[string]map[types.UID]*corev1.Pod
	podNode    map[types.UID]string
	pending    map[types.UID]*corev1.Pod
	claims     map[string]*v1beta1.NodeClaim
	// writes are this process's claim writes the informer does not show yet.
	writes     map[string]observedWrite
	daemonSets map[types.NamespacedName]*appsv1.DaemonSet
	// pdbs are kept with the pods they guard, so that a decision sees both as of one
	// moment, and so that a new leader decides nothing before it knows them.
	pdbs        map[types.NamespacedName]*policyv1.PodDisruptionBudget
	nominations map[types.UID]nomination
	// reserved are the claims whose Nodes open reserved to the pods nominated to them
	// (see Reserve).
	reserved map[string]bool
	// version grows whenever something that could make an unschedulable pod fit
	// changes: a pool, a node class, a Node, a claim, a storage object.
	version uint64

	// onPending is called, outside the lock, when a pod waits for capacity, and when a
	// pool or node class changes while pods wait.
	onPending func()

	// handlers are Watch's registrations with the informers, each of which tells when
	// its handler has been handed its informer's initial list.
	handlers []toolscache.ResourceEventHandlerRegistration
}

// nomination is a pod provisioning placed on a claim: the next decisions count it there
// until the claim's Node is Ready or the nomination expires.
type nomination struct {
	claim   string
	expires time.Time
}

// New returns an empty picture; Watch fills it. prePullNamespace is the namespace of
// Stratos's pre-pull pods (--prepull-namespace), which the picture leaves out.
func New(clk clock.PassiveClock, prePullNamespace string) *Cluster {
	return &Cluster{
		clock:            clk,
		prePullNamespace: prePullNamespace,
		nodes:            map[string]*corev1.Node{},
		podsByNode:       map[string]map[types.UID]*corev1.Pod{},
		podNode:          map[types.UID]string{},
		pending:          map[types.UID]*corev1.Pod{},
		claims:           map[string]*v1beta1.NodeClaim{},
		writes:           map[string]observedWrite{},
		daemonSets:       map[types.NamespacedName]*appsv1.DaemonSet{},
		pdbs:             map[types.NamespacedName]*policyv1.PodDisruptionBudget{},
		nominations:      map[types.UID]nomination{},
		reserved:         map[string]bool{},
	}
}

// OnPending sets what to call when a pod waits for capacity, or when a pool or node
// class changes while pods wait.
func (c *Cluster) OnPending(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onPending = f
}

// Watch feeds the picture from the informers of a cache (a manager's).
func (c *Cluster) Watch(ctx context.Context, informers cache.Informers) error {
	for obj, handle := range map[client.Object]func(obj any, deleted bool){
		&corev1.Node{}:                  c.updateNode,
		&corev1.Pod{}:                   c.updatePod,
		&v1beta1.NodeClaim{}:            c.updateClaim,
		&appsv1.DaemonSet{}:             c.updateDaemonSet,
		&policyv1.PodDisruptionBudget{}: c.updatePDB,
		&v1beta1.NodePool{}:             c.templateChanged,
		&v1beta1.FakeNodeClass{}:        c.templateChanged,
		&v1beta1.EC2NodeClass{}:         c.templateChanged,
		// The storage objects pods' volumes name: a claim bound, a class or a CSINode
		// changed may let a waiting pod fit (the simulation reads them from the cache).
		&corev1.PersistentVolumeClaim{}: c.templateChanged,
		&corev1.PersistentVolume{}:      c.templateChanged,
		&storagev1.StorageClass{}:       c.templateChanged,
		&storagev1.CSINode{}:            c.templateChanged,
	} {
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		registration, err := informer.AddEventHandler(handlerFor(handle))
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.handlers = append(c.handlers, registration)
		c.mu.Unlock()
	}
	return nil
}

// HasSynced reports whether the picture holds everything the informers listed when they
// started. An informer's own HasSynced turns true once it has the list, while its
// handlers may still be working through it: a new leader that decided then could see
// pods waiting and not the claims already launched for them. A cluster not fed by
// Watch has nothing to wait for.
func (c *Cluster) HasSynced() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, h := range c.handlers {
		if !h.HasSynced() {
			return false
		}
	}
	return true
}

// handlerFor adapts a handler to informer events, unwrapping deletions seen late.
func handlerFor(handle func(obj any, deleted bool)) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { handle(obj, false) },
		UpdateFunc: func(_, obj any) { handle(obj, false) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			handle(obj, true)
		},
	}
}

// templateChanged records a change to a pool, a node class or a storage object: pods
// that waited may fit now, so provisioning looks again.
func (c *Cluster) templateChanged(any, bool) {
	c.mu.Lock()
	c.version++
	notify := c.onPending
	waiting := len(c.pending) > 0
	c.mu.Unlock()
	if notify != nil && waiting {
		notify()
	}
}

func (c *Cluster) updateNode(obj any, deleted bool) {
	if node, ok := obj.(*corev1.Node); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.version++
		store(c.nodes, node.Name, node, deleted)
	}
}

func (c *Cluster) updateClaim(obj any, deleted bool) {
	claim, ok := obj.(*v1beta1.NodeClaim)
	if !ok {
		return
	}
	c.mu.Lock()
	c.version++
	store(c.claims, claim.Name, claim, deleted)
	c.confirmWriteLocked(claim.Name, claim.ResourceVersion, deleted)
	gone := claim
	if deleted {
		gone = nil
		delete(c.reserved, claim.Name)
	}
	lapsed := c.nominationsLapseLocked(claim.Name, gone)
	notify := c.onPending
	c.mu.Unlock()
	if lapsed && notify != nil {
		notify()
	}
}

// nominationsLapseLocked reports whether pods are nominated to the named claim that it,
// as it is now (nil: gone), no longer holds: asked back to standby, or being deleted.
// Provisioning is told then, so that the pods are planned again in the next batch
// instead of waiting for a resync. The caller holds the lock.
func (c *Cluster) nominationsLapseLocked(name string, claim *v1beta1.NodeClaim) bool {
	if claim != nil && claim.DeletionTimestamp.IsZero() && claim.Spec.DesiredState == v1beta1.DesiredRunning {
		return false
	}
	for _, n := range c.nominations {
		if n.claim == name {
			return true
		}
	}
	return false
}

func (c *Cluster) updateDaemonSet(obj any, deleted bool) {
	if ds, ok := obj.(*appsv1.DaemonSet); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		store(c.daemonSets, types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}, ds, deleted)
	}
}

func (c *Cluster) updatePDB(obj any, deleted bool) {
	if pdb, ok := obj.(*policyv1.PodDisruptionBudget); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		store(c.pdbs, types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name}, pdb, deleted)
	}
}

// store keeps an object under its key, or forgets it once deleted.
func store[K comparable, V any](m map[K]V, key K, obj V, deleted bool) {
	if deleted {
		delete(m, key)
		return
	}
	m[key] = obj
}

// updatePod files a pod under its Node, or among the pods waiting for capacity.
func (c *Cluster) updatePod(obj any, deleted bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	c.mu.Lock()
	delete(c.pending, pod.UID)
	if node, ok := c.podNode[pod.UID]; ok {
		delete(c.podsByNode[node], pod.UID)
		if len(c.podsByNode[node]) == 0 {
			delete(c.podsByNode, node)
		}
		delete(c.podNode, pod.UID)
	}
	var notify func()
	switch {
	case deleted || podutil.Finished(pod) || podutil.PrePull(pod, c.prePullNamespace):
		// A pre-pull pod takes no room: it asks for no resources, and the lifecycle
		// controller removes it before its Node runs pods or stops. Counted on its
		// Node, it would take a pod slot from a warming claim's simulated room. Left out
		// here, it is in no snapshot: what reads them need not ask again.
		delete(c.nominations, pod.UID)
	case pod.Spec.NodeName != "":
		if c.podsByNode[pod.Spec.NodeName] == nil {
			c.podsByNode[pod.Spec.NodeName] = map[types.UID]*corev1.Pod{}
		}
		c.podsByNode[pod.Spec.NodeName][pod.UID] = pod
		c.podNode[pod.UID] = pod.Spec.NodeName
		delete(c.nominations, pod.UID)
	case Provisionable(pod):
		c.pending[pod.UID] = pod
		notify = c.onPending
	}
	c.mu.Unlock()
	if notify != nil {
		notify()
	}
}
