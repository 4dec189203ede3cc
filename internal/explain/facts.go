// Package explain tells why a pod waits, or how it got its node, from what Stratos and
// Kubernetes recorded: the pod's conditions and Events, its Node, the NodeClaim behind
// the Node or the one provisioning placed it on, and the NodePools. It is what
// `stratos explain pod` prints (docs/troubleshooting.md).
//
// Explain is the pure part: Facts in, an Explanation out. Read gathers the Facts with a
// client; nothing else here talks to the API server.
package explain

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Facts is everything the explanation of one pod is made from.
type Facts struct {
	Pod *corev1.Pod
	// PodEvents are the Events about the pod, from any component.
	PodEvents []Event
	// Node is the pod's Node; nil when the pod is not bound or its Node is gone.
	Node *corev1.Node
	// ClaimName names the NodeClaim behind the pod's Node, or, for a pod not bound, the
	// claim provisioning placed it on: its last stratos.sh/reserved toleration when that
	// claim is still asked to run, else the claim whose stratos.sh/placed-pods lists it
	// (PlacedOn); empty when there is none.
	ClaimName string
	// Claim is that claim, nil when it is gone (or when ClaimName is empty).
	Claim *v1beta1.NodeClaim
	// ClaimEvents are the Events about the claim.
	ClaimEvents []Event
	// Pools are every NodePool.
	Pools []v1beta1.NodePool
	// Now is when the facts were read.
	Now time.Time
}

// Event is what an explanation needs of a Kubernetes Event.
type Event struct {
	Type    string
	Reason  string
	Message string
	// Source is the component that reported it: "stratos", "default-scheduler", ...
	Source string
	Count  int32
	// Last is when it was last seen.
	Last time.Time
}

// EventOf reads an Event of the core API, whichever way it was written: by the events
// API (eventTime and series) or by the older recorder (timestamps and count).
func EventOf(e *corev1.Event) Event {
	out := Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Source: e.ReportingController, Count: e.Count}
	if out.Source == "" {
		out.Source = e.Source.Component
	}
	for _, t := range []time.Time{e.FirstTimestamp.Time, e.LastTimestamp.Time, e.EventTime.Time} {
		if t.After(out.Last) {
			out.Last = t
		}
	}
	if e.Series != nil {
		out.Count = e.Series.Count
		if e.Series.LastObservedTime.After(out.Last) {
			out.Last = e.Series.LastObservedTime.Time
		}
	}
	if out.Count == 0 {
		out.Count = 1
	}
	return out
}
