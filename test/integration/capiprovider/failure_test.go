//lint:file-ignore SA1019 CAPI v1.14 reports a provider's terminal failure only in its deprecated v1beta1 status fields.

package capiprovider_test

import (
	"testing"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// setFailure writes a terminal failure on a Machine as CAPI's Machine controller copies
// it from a provider's object on the v1beta1 contract.
func setFailure(t *testing.T, claim, message string) {
	t.Helper()
	setStatus(t, claim, func(s *clusterv1.MachineStatus) {
		s.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{FailureMessage: ptr.To(message)}}
	})
}
