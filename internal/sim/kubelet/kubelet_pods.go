package kubelet

import (
	"container/heap"
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	nodeutil "k8s.io/component-helpers/node/util"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

const (
	// podNodeNameIndex indexes the cached pods by spec.nodeName. It is the kubelets'
	// own: the operator may share the manager and index the same field under its name.
	podNodeNameIndex = "fake-kubelet.spec.nodeName"
	// podWorkers bound the pods synced at once.
	podWorkers = 16
	// conflictRetry is the real time after which a pod whose status changed under a
	// write is synced again, should its update not have arrived by then.
	conflictRetry = 100 * time.Millisecond
)

// SetupWithManager runs the kubelet simulator in mgr: the Node loop, and the kubelets'
// part in the pods bound to the cloud's Nodes.
//
//   - A pod bound to a Node whose instance runs and whose kubelet reports Ready asks the
//     machine for its containers' images (see kubelet_podimages.go) and starts
//     ContainerStartDelay after the latest of the kubelet first seeing it bound, the
//     Node turning Ready and its last image landing on disk: it turns Running and
//     Ready, with container statuses. While an image is pulled, or failed to pull, it
//     is Pending with its containers waiting.
//   - On a Node that is not Ready (its instance stopping, stopped, shutting down or
//     booting again) a pod turns not Ready and stays Running, until the Node is Ready
//     again and the containers start again, after the delay once more.
//   - A pod deleted on a Node whose instance runs goes away, as a real kubelet stops its
//     containers and confirms the deletion; on a stopped instance it stays terminating,
//     as nothing runs there to confirm it.
//
// Finished pods, and pods on Nodes the cloud does not know, are left alone. Pods are
// read from mgr's cache and written through the kubelet's client, with optimistic
// locking, and only when their status changes.
func (k *Kubelet) SetupWithManager(mgr ctrl.Manager) error {
	_, err := k.setupWithManager(mgr)
	return err
}

func (k *Kubelet) setupWithManager(mgr ctrl.Manager) (*podSyncer, error) {
	if err := mgr.Add(k); err != nil {
		return nil, err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeNameIndex, func(o client.Object) []string {
		if name := o.(*corev1.Pod).Spec.NodeName; name != "" {
			return []string{name}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	s := &podSyncer{
		machines: k.machines,
		client:   k.client,
		reader:   mgr.GetCache(),
		alarms:   newAlarms(k.machines.Clock()),
		pods:     map[types.NamespacedName]podRecord{},
	}
	bound := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.(*corev1.Pod).Spec.NodeName != "" })
	return s, ctrl.NewControllerManagedBy(mgr).
		Named("fake-kubelet-pods").
		For(&corev1.Pod{}, builder.WithPredicates(bound)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(s.podsOnNode), builder.WithPredicates(kubeletReportChanged())).
		WatchesRawSource(source.Func(s.alarms.start)).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: podWorkers}).
		Complete(s)
}

// podSyncer plays the kubelets' part in the pods bound to the machines' Nodes.
type podSyncer struct {
	machines Machines
	client   client.Client
	reader   client.Reader
	// alarms wake pods when their images land or their containers are due to start, on
	// the cloud's clock.
	alarms *alarms

	mu   sync.Mutex
	pods map[types.NamespacedName]podRecord
}

// podRecord is what the kubelets remember of one pod.
type podRecord struct {
	uid types.UID
	// seen is the clock time a kubelet first saw the pod bound.
	seen time.Time
	// boot is the boot of the host in which the containers last started, 0 if never.
	boot int
	// synced is the clock time the pod was last synced at.
	synced time.Time
}

// kubeletReportChanged passes Node events that can change what the pods on the Node do:
// a Node created or deleted, its readiness or its boot changed, or a status post of its
// kubelet (the Ready condition's heartbeat): the post of a kubelet thawed after a
// hibernation changes nothing else when the Node still showed Ready, yet the pods it
// left alone while frozen need it. Lease renewals and others' changes to labels and
// taints do not pass.
func kubeletReportChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)
		return before.Status.NodeInfo.BootID != after.Status.NodeInfo.BootID || readySummary(before) != readySummary(after)
	}}
}

func readySummary(node *corev1.Node) [4]string {
	if _, c := nodeutil.GetNodeCondition(&node.Status, corev1.NodeReady); c != nil {
		return [4]string{string(c.Status), c.Reason, c.Message, c.LastHeartbeatTime.UTC().String()}
	}
	return [4]string{}
}

// podsOnNode maps a Node to the pods bound to it, from the cache's index.
func (s *podSyncer) podsOnNode(ctx context.Context, node client.Object) []reconcile.Request {
	pods := &corev1.PodList{}
	if err := s.reader.List(ctx, pods, client.MatchingFields{podNodeNameIndex: node.GetName()}); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the pods of a Node failed", "node", node.GetName())
		return nil
	}
	requests := make([]reconcile.Request, 0, len(pods.Items))
	for _, pod := range pods.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pod)})
	}
	return requests
}

// Reconcile brings one pod's status up to what its Node's kubelet would report now.
func (s *podSyncer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := s.reader.Get(ctx, req.NamespacedName, pod); err != nil {
		if apierrors.IsNotFound(err) {
			s.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Spec.NodeName == "" {
		return reconcile.Result{}, nil
	}
	now, host, ok := s.machines.PodHost(pod.Spec.NodeName, req.String())
	if !ok {
		// Not one of the cloud's Nodes, or one the cloud has forgotten.
		return reconcile.Result{}, nil
	}
	defer s.update(req.NamespacedName, pod.UID, func(r *podRecord) { r.synced = now })
	if host.Frozen {
		// A kubelet frozen by a hibernation does nothing; it catches up when it thaws,
		// and its status post then syncs the Node's pods again.
		return reconcile.Result{}, nil
	}
	if !pod.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, s.finishDeletion(ctx, pod, host)
	}
	if podutil.Finished(pod) {
		s.forget(req.NamespacedName)
		return reconcile.Result{}, nil
	}

	rec := s.record(req.NamespacedName, pod, now)
	var status *corev1.PodStatus
	started := false
	switch {
	case !host.Ready:
		if podReady(pod) {
			status = notReadyStatus(pod, now)
		}
	case rec.boot == host.Boot || (rec.boot == 0 && podReady(pod)):
		// Started in this boot; or started by someone else, or by the kubelets before
		// a restart of the simulator, and found running: adopt it.
		started = true
		if len(pod.Spec.ReadinessGates) > 0 || !conditionTrue(pod, corev1.PodReady) {
			// Readiness gates may have changed since; and containers that kept running
			// through a hibernation, which kube-controller-manager may have marked not
			// Ready meanwhile, are ready again, with no restart.
			status = readyAgainStatus(pod, now)
		}
	default:
		from := laterOf(rec.seen, host.ReadyAt)
		pulls, ok := s.machines.PullImages(pod.Spec.NodeName, host.Boot, from, podImages(pod))
		if !ok {
			// The Node stopped being Ready since: its change syncs the pod again.
			break
		}
		images := waitForImages(pulls, now)
		var startAt time.Time
		if images.present {
			startAt = laterOf(from, images.presentAt).Add(host.StartDelay)
		}
		if !images.present || now.Before(startAt) {
			if wake := laterOf(images.next, startAt); !wake.IsZero() {
				s.alarms.set(req.NamespacedName, wake)
			}
			switch {
			case podReady(pod):
				// Still Ready from an earlier boot: not until the containers start again.
				status = notReadyStatus(pod, now)
			case !images.present && !ranBefore(pod):
				status = waitingStatus(pod, host, rec.seen, pulls, now)
			}
			break
		}
		started = true
		status = runningStatus(pod, host, rec.seen, startAt)
	}

	if status != nil && !equality.Semantic.DeepEqual(&pod.Status, status) {
		updated := pod.DeepCopy()
		updated.Status = *status
		err := s.client.Status().Patch(ctx, updated, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{}))
		switch {
		case apierrors.IsNotFound(err):
			return reconcile.Result{}, nil
		case apierrors.IsConflict(err):
			// The cache lags or someone else wrote: the update on its way syncs again.
			return reconcile.Result{RequeueAfter: conflictRetry}, nil
		case err != nil:
			return reconcile.Result{}, err
		}
		logf.FromContext(ctx).V(1).Info("Posted the pod status", "node", pod.Spec.NodeName, "phase", status.Phase, "ready", podReady(updated))
	}
	if started {
		s.update(req.NamespacedName, pod.UID, func(r *podRecord) { r.boot = host.Boot })
	}
	return reconcile.Result{}, nil
}

// finishDeletion confirms the deletion of a terminating pod on a running instance.
func (s *podSyncer) finishDeletion(ctx context.Context, pod *corev1.Pod, host physics.PodHost) error {
	if !host.Running {
		return nil
	}
	err := s.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	return client.IgnoreNotFound(err)
}

// record returns what is remembered of a pod, first remembering it as seen now, or at
// the start time in its status when a kubelet saw it before a restart of the simulator.
func (s *podSyncer) record(key types.NamespacedName, pod *corev1.Pod, now time.Time) podRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.pods[key]
	if !ok || rec.uid != pod.UID {
		rec = podRecord{uid: pod.UID, seen: now}
		if t := pod.Status.StartTime; t != nil && t.Time.Before(now) {
			rec.seen = t.Time
		}
		s.pods[key] = rec
	}
	return rec
}

// update changes what is remembered of a pod, if it is still the same pod.
func (s *podSyncer) update(key types.NamespacedName, uid types.UID, change func(*podRecord)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.pods[key]; ok && rec.uid == uid {
		change(&rec)
		s.pods[key] = rec
	}
}

func (s *podSyncer) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, key)
}

// lookup returns what is remembered of a pod.
func (s *podSyncer) lookup(key types.NamespacedName) (podRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.pods[key]
	return rec, ok
}

// alarms enqueue pods at clock times. Controller-runtime's RequeueAfter counts real
// time; these count the cloud's clock, so that a fake clock stepped past a pod's start
// wakes it at once, and an idle one does not wake it at all.
type alarms struct {
	clock clock.WithTicker
	// changed holds one pending notice that an earlier alarm was set.
	changed chan struct{}

	mu      sync.Mutex
	queue   alarmQueue
	pending map[types.NamespacedName]time.Time
}

type alarm struct {
	at  time.Time
	key types.NamespacedName
}

func newAlarms(clk clock.WithTicker) *alarms {
	return &alarms{clock: clk, changed: make(chan struct{}, 1), pending: map[types.NamespacedName]time.Time{}}
}

// set makes sure key is enqueued at or before at.
func (a *alarms) set(key types.NamespacedName, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if pending, ok := a.pending[key]; ok && !pending.After(at) {
		return
	}
	a.pending[key] = at
	heap.Push(&a.queue, alarm{at: at, key: key})
	if a.queue[0].key == key && a.queue[0].at.Equal(at) {
		select {
		case a.changed <- struct{}{}:
		default:
		}
	}
}

// start enqueues pods as their alarms go off, until ctx is done; it is the controller's
// source.
func (a *alarms) start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	go func() {
		for {
			next, ok := a.fire(queue)
			var due <-chan time.Time
			stop := func() {}
			if ok {
				due, stop = armAt(a.clock, next)
			}
			select {
			case <-ctx.Done():
				stop()
				return
			case <-a.changed:
			case <-due:
			}
			stop()
		}
	}()
	return nil
}

// fire enqueues the pods whose alarms are due and returns the time of the next alarm.
func (a *alarms) fire(queue workqueue.TypedRateLimitingInterface[reconcile.Request]) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock.Now()
	for len(a.queue) > 0 && !a.queue[0].at.After(now) {
		due := heap.Pop(&a.queue).(alarm)
		// A later alarm replaced by an earlier one is stale.
		if pending, ok := a.pending[due.key]; ok && pending.Equal(due.at) {
			delete(a.pending, due.key)
			queue.Add(reconcile.Request{NamespacedName: due.key})
		}
	}
	if len(a.queue) == 0 {
		return time.Time{}, false
	}
	return a.queue[0].at, true
}

// armAt returns a channel that fires when clk reaches at, and a function that releases
// the timer.
func armAt(clk clock.WithTicker, at time.Time) (<-chan time.Time, func()) {
	for {
		armed := clk.Now()
		if !at.After(armed) {
			due := make(chan time.Time, 1)
			due <- armed
			return due, func() {}
		}
		timer := clk.NewTimer(at.Sub(armed))
		// A fake clock stepped between reading it and arming the timer would make the
		// timer fire late by the step: arm it again if the clock moved meanwhile.
		if clk.Since(armed) < armTolerance {
			return timer.C(), func() { timer.Stop() }
		}
		timer.Stop()
	}
}

// alarmQueue is a heap of alarms, earliest first.
type alarmQueue []alarm

func (q alarmQueue) Len() int           { return len(q) }
func (q alarmQueue) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q alarmQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *alarmQueue) Push(x any)        { *q = append(*q, x.(alarm)) }
func (q *alarmQueue) Pop() any {
	old := *q
	last := old[len(old)-1]
	*q = old[:len(old)-1]
	return last
}
