//lint:file-ignore SA1019 CAPI v1.14 reports a provider's terminal failure only in its deprecated v1beta1 status fields.

package clusterapi

import (
	"fmt"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// failureOf says why a Machine failed for good, or is empty while it has not. CAPI's
// v1beta2 Machines have no terminal state (phase Failed is never set any more: a Machine
// that does not come up stays unready until someone deletes it, and Stratos's
// registration timeout does). What CAPI v1.14 still reports is the terminal failure a
// bootstrap or infrastructure provider on the v1beta1 contract states in its object's
// status.failureReason and failureMessage, or an infrastructure machine deleted after
// it was provisioned: it copies them to the Machine's deprecated v1beta1 status, read
// here.
func failureOf(machine *clusterv1.Machine) string {
	d := machine.Status.Deprecated
	if d == nil || d.V1Beta1 == nil {
		return ""
	}
	reason, message := string(ptr.Deref(d.V1Beta1.FailureReason, "")), ptr.Deref(d.V1Beta1.FailureMessage, "")
	switch {
	case reason != "" && message != "":
		return fmt.Sprintf("Machine failed: %s: %s", reason, message)
	case reason != "" || message != "":
		return "Machine failed: " + reason + message
	default:
		return ""
	}
}
