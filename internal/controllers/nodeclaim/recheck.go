package nodeclaim

import (
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// recheckBuffer is how many asks wait for the lifecycle controller before more are
// dropped: a dropped ask is still taken at the claim's next reconcile, and garbage
// collection asks again at its next pass.
const recheckBuffer = 1024

// Recheck carries garbage collection's word to the lifecycle controller (and the
// interruption controller's, see Ask): the claims
// whose instance the cloud's list of the cluster's instances lacks. Garbage collection
// does not judge them itself — a NotFound may be one instance gone or a whole pool's
// answer gone wrong, and an instance without the cluster's tag is not gone — but asks
// the lifecycle controller, which alone writes claims, to look at each again, whatever
// its phase: the steps of some phases do not ask the cloud about the instance. The
// operator gives both the same Recheck; nil asks nothing.
type Recheck struct {
	asked  sync.Map // claim name → struct{}
	events chan event.GenericEvent
}

// NewRecheck returns a Recheck for one lifecycle controller and its garbage collection.
func NewRecheck() *Recheck {
	return &Recheck{events: make(chan event.GenericEvent, recheckBuffer)}
}

// Ask asks the lifecycle controller to look at the claim's instance now, without
// waiting: the interruption controller does so when the cloud says that the instance
// is stopping, stopped or terminated.
func (r *Recheck) Ask(claim *v1beta1.NodeClaim) { r.ask(claim) }

// ask asks the lifecycle controller to look at the claim's instance, without waiting.
func (r *Recheck) ask(claim *v1beta1.NodeClaim) {
	if r == nil {
		return
	}
	r.asked.Store(claim.Name, struct{}{})
	select {
	case r.events <- event.GenericEvent{Object: claim}:
	default:
	}
}

// take reports whether the claim was asked about since the last take, and forgets the ask.
func (r *Recheck) take(name string) bool {
	if r == nil {
		return false
	}
	_, asked := r.asked.LoadAndDelete(name)
	return asked
}

// source wakes the asked claims.
func (r *Recheck) source() source.TypedSource[reconcile.Request] {
	return source.Channel(r.events, &handler.EnqueueRequestForObject{})
}
