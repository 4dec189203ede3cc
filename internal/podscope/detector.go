package podscope

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/metrics"
)

// DefaultStatusConfigMap is where Cluster Autoscaler writes its status by default
// (--write-status-configmap, --status-config-map-name, in its own namespace).
var DefaultStatusConfigMap = types.NamespacedName{Namespace: "kube-system", Name: "cluster-autoscaler-status"}

// DefaultInterval is how often auto looks for another autoscaler.
const DefaultInterval = 30 * time.Second

// karpenterNodePools are Karpenter's NodePools in the versions Karpenter served them:
// v1 since Karpenter 1.0, v1beta1 from 0.32 to 1.0 (EKS Auto Mode serves v1).
var karpenterNodePools = []schema.GroupVersionResource{
	{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"},
	{Group: "karpenter.sh", Version: "v1beta1", Resource: "nodepools"},
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Detector keeps the scope in effect: Mode when it is all or opted-in; under auto, what
// Decide makes of a look for another autoscaler, at start and every Interval. It reads
// metadata only (no ConfigMap's data, no NodePool's spec).
type Detector struct {
	Mode Scope
	// Metadata reads the other autoscalers' objects; unused unless Mode is Auto.
	Metadata metadata.Interface
	// StatusConfigMap is Cluster Autoscaler's status ConfigMap; zero is
	// DefaultStatusConfigMap.
	StatusConfigMap types.NamespacedName
	// Interval between looks; zero is DefaultInterval.
	Interval time.Duration
	// OnChange, when set, is called after the scope changed, so that pods the new scope
	// serves are looked at without waiting for the next resync.
	OnChange func()

	mu       sync.Mutex
	decision Decision
	// forbidden remembers the checks already logged as forbidden: once is enough.
	forbidden map[string]bool
}

// NeedLeaderElection is true: the scope serves provisioning, which only the leader runs.
func (d *Detector) NeedLeaderElection() bool { return true }

// Current is the scope in effect: All or OptedIn.
func (d *Detector) Current() Scope {
	if d.Mode != Auto {
		return d.Mode
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.decision.Scope == "" {
		return OptedIn // not looked yet: see ReasonStarting
	}
	return d.decision.Scope
}

// Decision is the scope in effect and why; zero before Start.
func (d *Detector) Decision() Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.decision
}

// Start looks at once, then every Interval, until ctx ends. Under all and opted-in it
// only publishes the scope.
func (d *Detector) Start(ctx context.Context) error {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("podscope"))
	if d.Mode != Auto {
		d.set(ctx, Decision{Scope: d.Mode, Reason: ReasonFlag})
		<-ctx.Done()
		return nil
	}
	interval := d.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	d.set(ctx, Decision{Scope: OptedIn, Reason: ReasonStarting})
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		d.Check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Check looks for another autoscaler once and updates the scope.
func (d *Detector) Check(ctx context.Context) {
	found := Findings{Karpenter: d.karpenter(ctx), ClusterAutoscaler: d.clusterAutoscaler(ctx)}
	d.mu.Lock()
	before := d.decision
	d.mu.Unlock()
	d.set(ctx, Decide(d.Mode, found, before))
}

// set records a decision; a change is logged, published and told to OnChange.
func (d *Detector) set(ctx context.Context, decision Decision) {
	d.mu.Lock()
	changed := decision != d.decision
	d.decision = decision
	d.mu.Unlock()
	if !changed {
		return
	}
	metrics.PodScope.Reset()
	metrics.PodScope.WithLabelValues(string(decision.Scope), decision.Reason).Set(1)
	log.FromContext(ctx).Info("Pending pods served", "scope", decision.Scope, "reason", decision.Reason, "mode", d.Mode)
	if d.OnChange != nil {
		d.OnChange()
	}
}

// karpenter reports whether a Karpenter NodePool exists: the first page of one item of
// the first served version. An API server without the resource answers NotFound.
func (d *Detector) karpenter(ctx context.Context) Presence {
	for _, gvr := range karpenterNodePools {
		list, err := d.Metadata.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		switch {
		case apierrors.IsNotFound(err):
			continue // this version is not served
		case err != nil:
			return d.failed(ctx, "nodepools.karpenter.sh", err)
		case len(list.Items) > 0:
			return Present
		default:
			return Absent
		}
	}
	return Absent
}

// clusterAutoscaler reports whether Cluster Autoscaler's status ConfigMap exists.
func (d *Detector) clusterAutoscaler(ctx context.Context) Presence {
	key := d.StatusConfigMap
	if key == (types.NamespacedName{}) {
		key = DefaultStatusConfigMap
	}
	_, err := d.Metadata.Resource(configMaps).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case err == nil:
		return Present
	case apierrors.IsNotFound(err):
		return Absent
	}
	return d.failed(ctx, "configmap "+key.String(), err)
}

// failed classifies a failed check, logging a refusal once and any other error each time.
func (d *Detector) failed(ctx context.Context, what string, err error) Presence {
	if !apierrors.IsForbidden(err) {
		log.FromContext(ctx).Error(err, "Looking for another autoscaler failed; the pod scope stays as it is", "looking at", what)
		return Unknown
	}
	d.mu.Lock()
	logged := d.forbidden[what]
	if d.forbidden == nil {
		d.forbidden = map[string]bool{}
	}
	d.forbidden[what] = true
	d.mu.Unlock()
	if !logged {
		log.FromContext(ctx).Error(err, "Not permitted to look for another autoscaler: counted as none. Grant the permission (docs/operations.md#permissions) or set --pod-scope", "looking at", what)
	}
	return Forbidden
}
