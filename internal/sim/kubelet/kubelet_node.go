package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/sim/physics"
)

const (
	// leaseDurationSeconds is the kubelet's default node lease duration.
	leaseDurationSeconds = 40
	// kubeletPort is the kubelet's default port, reported in daemonEndpoints.
	kubeletPort = 10250

	messageNetworkNotReady = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady"
	messageShuttingDown    = "node is shutting down"
)

// register creates the Node as a kubelet does at startup, with the labels and the
// --register-with-taints of the launch, and with its status as of now: a kubelet's
// first Node carries its capacity, addresses and conditions (the API server takes a
// Node's status on create), so a controller that sees the Node appear sees them too. A
// Node that exists is left as it is: a restarted kubelet keeps its Node, and others may
// have changed its labels and taints.
func (k *Kubelet) register(ctx context.Context, v physics.NodeView, now time.Time) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: v.NodeName, Labels: withDriverLabels(v.Labels, v.InstanceType)},
		Spec:       corev1.NodeSpec{ProviderID: v.ProviderID, Taints: v.Taints},
	}
	k.setStatus(&node.Status, v, now)
	err := k.client.Create(ctx, node)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		logf.FromContext(ctx).V(1).Info("Registered the Node", "node", v.NodeName, "instance", v.InstanceID)
	}
	return err
}

// updateStatus patches the parts of the Node's status a kubelet owns and returns the
// Node's UID. A Node deleted by someone else stays deleted, as with a real kubelet.
func (k *Kubelet) updateStatus(ctx context.Context, v physics.NodeView, now time.Time) (types.UID, error) {
	var uid types.UID
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := k.client.Get(ctx, client.ObjectKey{Name: v.NodeName}, node); err != nil {
			return err
		}
		uid = node.UID
		updated := node.DeepCopy()
		k.setStatus(&updated.Status, v, now)
		if equality.Semantic.DeepEqual(node.Status, updated.Status) {
			return nil
		}
		// The optimistic lock makes a concurrent writer's change a conflict to retry
		// rather than something this patch of lists such as images could undo.
		return k.client.Status().Patch(ctx, updated, client.StrategicMergeFrom(node, client.MergeFromWithOptimisticLock{}))
	})
	if apierrors.IsNotFound(err) {
		logf.FromContext(ctx).V(1).Info("The Node is gone; not registering it again before the next boot", "node", v.NodeName)
		return "", nil
	}
	if err == nil {
		logf.FromContext(ctx).V(1).Info("Posted the Node status", "node", v.NodeName, "phase", v.Phase, "images", len(v.Images))
	}
	return uid, err
}

// setStatus sets what the kubelet reports in status to what it is as of now.
func (k *Kubelet) setStatus(s *corev1.NodeStatus, v physics.NodeView, now time.Time) {
	s.Capacity = v.InstanceType.Capacity.DeepCopy()
	s.Allocatable = v.InstanceType.Allocatable()
	s.NodeInfo = corev1.NodeSystemInfo{
		MachineID:               v.InstanceID,
		SystemUUID:              v.InstanceID,
		BootID:                  fmt.Sprintf("%s-boot-%d", v.InstanceID, v.Boot),
		KernelVersion:           "6.12.0-fake",
		OSImage:                 "Fake Linux",
		ContainerRuntimeVersion: "containerd://2.1.0",
		KubeletVersion:          k.opts.KubeletVersion,
		OperatingSystem:         "linux",
		Architecture:            v.InstanceType.Architecture,
	}
	s.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: v.PrivateIP},
		{Type: corev1.NodeHostName, Address: v.NodeName},
	}
	s.DaemonEndpoints.KubeletEndpoint.Port = kubeletPort
	s.Images = nil
	for _, image := range v.Images {
		// By digest and by the reference pods name it by, as a kubelet lists them.
		s.Images = append(s.Images, corev1.ContainerImage{Names: []string{imageID(image), image}})
	}

	set := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string, since time.Time) {
		setCondition(&s.Conditions, corev1.NodeCondition{
			Type: t, Status: status, Reason: reason, Message: message,
			LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(since),
		})
	}
	set(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", now)
	set(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now)
	set(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available", now)
	switch v.Phase {
	case physics.NodeNotReady:
		set(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", messageNetworkNotReady, v.Since)
		set(corev1.NodeNetworkUnavailable, corev1.ConditionTrue, "NoRouteCreated", "Node created without a route", v.Since)
	case physics.NodeReady:
		set(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status", v.Since)
		set(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated", "RouteController created a route", v.Since)
	case physics.NodeShuttingDown:
		// Graceful node shutdown: the kubelet reports NotReady before it goes away.
		set(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", messageShuttingDown, v.Since)
	}
	if sick := v.Unhealthy; sick != nil {
		switch {
		case sick.Condition != "":
			// As node-problem-detector reports a problem: a condition of its own, True.
			set(corev1.NodeConditionType(sick.Condition), corev1.ConditionTrue, sick.Condition+"Detected",
				"the fake cloud reports "+sick.Condition, v.UnhealthySince)
		case !sick.Silent:
			set(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", messageRuntimeDown, v.UnhealthySince)
		}
	}
}

// setCondition replaces the condition of c's type, keeping its transition time when the
// status does not change, or adds c.
func setCondition(conditions *[]corev1.NodeCondition, c corev1.NodeCondition) {
	for n := range *conditions {
		existing := &(*conditions)[n]
		if existing.Type != c.Type {
			continue
		}
		if existing.Status == c.Status {
			c.LastTransitionTime = existing.LastTransitionTime
		}
		*existing = c
		return
	}
	*conditions = append(*conditions, c)
}

// renewLease renews the Node's Lease in kube-node-lease at now, creating it (and the
// namespace) if needed. Renewal times are real time, as kube-controller-manager reads
// them. A renewal is one merge patch of the Lease's spec, with no read first: the Lease
// is the kubelet's alone, and a read per renewal doubled the simulator's heaviest load
// on the API server.
func (k *Kubelet) renewLease(ctx context.Context, v physics.NodeView, nodeUID types.UID, now time.Time) error {
	renewed := metav1.NewMicroTime(now)
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{
		"holderIdentity": v.NodeName, "leaseDurationSeconds": leaseDurationSeconds, "renewTime": renewed,
	}})
	if err != nil {
		return err
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceNodeLease, Name: v.NodeName}}
	err = k.client.Patch(ctx, lease, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		if err := k.ensureLeaseNamespace(ctx); err != nil {
			return err
		}
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceNodeLease, Name: v.NodeName},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(v.NodeName),
				LeaseDurationSeconds: ptr.To[int32](leaseDurationSeconds),
				RenewTime:            &renewed,
			},
		}
		// Like the kubelet's, the Lease goes away with its Node.
		if nodeUID != "" {
			lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: v.NodeName, UID: nodeUID}}
		}
		return k.client.Create(ctx, lease)
	}
	return err
}

// ensureLeaseNamespace creates kube-node-lease if it does not exist. kube-apiserver
// normally creates it, so it is read first: kubelets whose role may only read it (the
// stratos-fake-kubelets ClusterRole) work wherever an API server made it.
func (k *Kubelet) ensureLeaseNamespace(ctx context.Context) error {
	if k.leaseNamespace.Load() {
		return nil
	}
	err := k.client.Get(ctx, client.ObjectKey{Name: corev1.NamespaceNodeLease}, &corev1.Namespace{})
	if apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: corev1.NamespaceNodeLease}}
		if err = k.client.Create(ctx, ns); apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	k.leaseNamespace.Store(true)
	return nil
}
