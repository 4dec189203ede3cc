//lint:file-ignore SA1019 CAPI v1.14 reports a provider's terminal failure only in its deprecated v1beta1 status fields.

package clusterapi

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// A Machine whose provider reported a terminal failure is terminated, ended at its
// launch with CAPI's words, whatever its power; being deleted comes first.
func TestFailedMachine(t *testing.T) {
	failed := func(reason *capierrors.MachineStatusError, message *string) *clusterv1.Machine {
		return &clusterv1.Machine{Status: clusterv1.MachineStatus{
			Phase:      string(clusterv1.MachinePhaseProvisioning),
			Deprecated: &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{FailureReason: reason, FailureMessage: message}},
		}}
	}
	for _, tt := range []struct {
		name    string
		machine *clusterv1.Machine
		want    string
	}{
		{"reason and message", failed(ptr.To(capierrors.CreateMachineError), ptr.To("no host matches")), "Machine failed: CreateError: no host matches"},
		{"message only", failed(nil, ptr.To("no host matches")), "Machine failed: no host matches"},
		{"reason only", failed(ptr.To(capierrors.InvalidConfigurationMachineError), nil), "Machine failed: InvalidConfiguration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := instanceOfMachine(tt.machine, "test", PoweredOn)
			if got.State != cloudprovider.StateTerminated || got.EndedAtLaunch != tt.want {
				t.Errorf("state %s, ended at launch %q; want terminated, %q", got.State, got.EndedAtLaunch, tt.want)
			}
		})
	}

	if got := instanceOfMachine(failed(ptr.To(capierrors.MachineStatusError("")), ptr.To("")), "test", ""); got.State != cloudprovider.StatePending || got.EndedAtLaunch != "" {
		t.Errorf("empty failure fields: state %s, ended at launch %q; want pending, not ended", got.State, got.EndedAtLaunch)
	}
	deleting := failed(ptr.To(capierrors.CreateMachineError), nil)
	now := metav1.NewTime(time.Now())
	deleting.DeletionTimestamp = &now
	if got := machineState(deleting, ""); got != cloudprovider.StateShuttingDown {
		t.Errorf("failed Machine being deleted: %s, want shutting-down", got)
	}
}
