package runner

import (
	"strings"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

// How a pod was served is told from what the simulator itself saw, not from the
// operator's status or code: the Node objects its kubelets registered and the
// StartInstances calls its cloud received. The operator's startup metric uses the same
// definitions from its own side; keeping the two apart lets one check the other.

// nodeRegistration is one Node object seen under a name: when it appeared, and the
// instance it stands for.
type nodeRegistration struct {
	at         time.Time
	providerID string
}

// servingPath tells how a pod that ran was served, from when it was created and went
// Running, the registrations seen under its node's name, and the start calls of every
// instance by instance ID:
//
//   - standby: the instance of its node was started (a StartInstances call) at or after
//     the pod's creation: it was stopped when the pod came;
//   - cold: its Node registered at or after the pod's creation: the node did not exist
//     when the pod came;
//   - existing: otherwise; the node was up (or on its way up, such as a node still
//     warming) before the pod came.
//
// Only the start that brought the node up for the pod counts, the last one before the
// pod ran: a node stopped and started again after the pod ran did not serve it from
// standby. Standby wins over cold: a stopped node whose Node registers again when it
// starts was served from standby. ok is false for a pod that never ran or whose node
// was never seen.
func servingPath(created, running time.Time, registrations []nodeRegistration, starts map[string][]time.Time) (path report.Path, ok bool) {
	if running.IsZero() {
		return "", false
	}
	node, ok := registrationServing(registrations, running)
	if !ok {
		return "", false
	}
	if start, started := lastAtOrBefore(starts[instanceOf(node.providerID)], running); started && !start.Before(created) {
		return report.PathStandby, true
	}
	if !node.at.Before(created) {
		return report.PathCold, true
	}
	return report.PathExisting, true
}

// registrationServing picks, of the registrations seen under a pod's node name (in the
// order seen), the one
// that served it: the last before the pod ran, since a name can come back with another
// instance (EC2 reuses private addresses, and Nodes are named after them). If every
// registration was seen after the pod ran, the Node's watch lagged the pod's: the first
// is the one.
func registrationServing(registrations []nodeRegistration, running time.Time) (nodeRegistration, bool) {
	if len(registrations) == 0 {
		return nodeRegistration{}, false
	}
	serving := registrations[0]
	for _, r := range registrations[1:] {
		if !r.at.After(running) && r.at.After(serving.at) {
			serving = r
		}
	}
	return serving, true
}

// lastAtOrBefore is the latest of times not after limit.
func lastAtOrBefore(times []time.Time, limit time.Time) (time.Time, bool) {
	var last time.Time
	found := false
	for _, t := range times {
		if !t.After(limit) && (!found || t.After(last)) {
			last, found = t, true
		}
	}
	return last, found
}

// instanceOf reads the instance ID from a provider ID, its last path segment on every
// cloud the simulator runs: fake:///fake-1a/i-0abc, aws:///us-east-1a/i-0abc.
func instanceOf(providerID string) string {
	if providerID == "" {
		return ""
	}
	return providerID[strings.LastIndex(providerID, "/")+1:]
}

// startsByInstance indexes the operator's start calls by instance.
func startsByInstance(calls []startCall) map[string][]time.Time {
	starts := map[string][]time.Time{}
	for _, call := range calls {
		for _, id := range call.ids {
			starts[id] = append(starts[id], call.at)
		}
	}
	return starts
}
