package clusterapinodeclass

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// ReasonResolved: the Cluster and every template the class names exist.
const ReasonResolved = "Resolved"

// Options tune the ClusterAPINodeClass controller. Zero fields take the defaults, those
// of the EC2NodeClass controller.
type Options struct {
	// Refresh is how often a class that resolved is checked again, so that a template or
	// Cluster removed since is seen. Defaults to 5m.
	Refresh time.Duration
	// RetryFailed is how soon a class that did not resolve is tried again. Defaults to 1m.
	RetryFailed time.Duration
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.Refresh <= 0 {
		o.Refresh = 5 * time.Minute
	}
	if o.RetryFailed <= 0 {
		o.RetryFailed = time.Minute
	}
	return o
}

// specOrDeletionChanged passes a class's creation, a change of its spec and the start
// of its deletion; not its status, which only this controller writes.
var specOrDeletionChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
			e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
}

// conflictRetry is how soon a pass runs again after its write lost a race.
const conflictRetry = 100 * time.Millisecond

// requeueOnConflict retries a pass soon when its write lost a race, and returns any
// other error for the controller's backoff.
func requeueOnConflict(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}
