package clusterapi

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func TestMachineState(t *testing.T) {
	now := metav1.NewTime(time.Now())
	registered := clusterv1.MachineStatus{NodeRef: clusterv1.MachineNodeReference{Name: "node-1"}, Phase: string(clusterv1.MachinePhaseRunning)}
	for _, tt := range []struct {
		name    string
		machine clusterv1.Machine
		power   PowerState
		want    cloudprovider.InstanceState
	}{
		{name: "provisioning", machine: clusterv1.Machine{Status: clusterv1.MachineStatus{Phase: string(clusterv1.MachinePhaseProvisioning)}}, want: cloudprovider.StatePending},
		{name: "provisioned, no Node yet", machine: clusterv1.Machine{Status: clusterv1.MachineStatus{Phase: string(clusterv1.MachinePhaseProvisioned)}}, want: cloudprovider.StatePending},
		{name: "its Node registered", machine: clusterv1.Machine{Status: registered}, want: cloudprovider.StateRunning},
		{name: "powered on", machine: clusterv1.Machine{Status: registered}, power: PoweredOn, want: cloudprovider.StateRunning},
		{name: "powered on, no Node yet", machine: clusterv1.Machine{}, power: PoweredOn, want: cloudprovider.StatePending},
		{name: "powering off", machine: clusterv1.Machine{Status: registered}, power: PoweringOff, want: cloudprovider.StateStopping},
		{name: "powered off", machine: clusterv1.Machine{Status: registered}, power: PoweredOff, want: cloudprovider.StateStopped},
		{name: "powering on again", machine: clusterv1.Machine{Status: registered}, power: PoweringOn, want: cloudprovider.StatePending},
		{name: "being deleted", machine: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: registered}, power: PoweredOn, want: cloudprovider.StateShuttingDown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := machineState(&tt.machine, tt.power); got != tt.want {
				t.Errorf("state %s, want %s", got, tt.want)
			}
		})
	}
}

// A Machine is an instance with its namespace/name as ID, the provider ID CAPI copied
// onto it, its type and zone from its labels, on demand, launched when it was created;
// one without the cluster's label is not owned.
func TestInstanceOfMachine(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: "default-abc", CreationTimestamp: created, Labels: map[string]string{
			v1beta1.TagCluster: "test", v1beta1.TagNodeClaim: "default-abc",
			corev1.LabelInstanceTypeStable: "m5.large", corev1.LabelTopologyZone: "rack-a",
		}},
		Spec: clusterv1.MachineSpec{ProviderID: "sim:///rack-a/i-1", FailureDomain: "rack-a"},
	}
	got := instanceOfMachine(machine, "test", "")
	if got.ID != "capi/default-abc" || got.ProviderID != "sim:///rack-a/i-1" || got.Type != "m5.large" || got.Zone != "rack-a" ||
		got.CapacityType != v1beta1.CapacityTypeOnDemand || !got.LaunchTime.Equal(created.Time) || got.NotOwned || got.State != cloudprovider.StatePending {
		t.Errorf("instance %+v", got)
	}
	if got.Tags[v1beta1.TagNodeClaim] != "default-abc" {
		t.Errorf("tags %v lack the claim", got.Tags)
	}
	if other := instanceOfMachine(machine, "another-cluster", ""); !other.NotOwned {
		t.Errorf("a Machine of another cluster's label is owned")
	}
}

func TestOnlineState(t *testing.T) {
	for _, tt := range []struct {
		name   string
		object map[string]any
		want   PowerState
	}{
		{"on", map[string]any{"spec": map[string]any{"online": true}, "status": map[string]any{"poweredOn": true}}, PoweredOn},
		{"off", map[string]any{"spec": map[string]any{"online": false}, "status": map[string]any{"poweredOn": false}}, PoweredOff},
		{"powering off", map[string]any{"spec": map[string]any{"online": false}, "status": map[string]any{"poweredOn": true}}, PoweringOff},
		{"powering on", map[string]any{"spec": map[string]any{"online": true}, "status": map[string]any{"poweredOn": false}}, PoweringOn},
		{"new: no wish, no fact", map[string]any{}, PoweringOn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := onlineState(&unstructured.Unstructured{Object: tt.object})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("power %s, want %s", got, tt.want)
			}
		})
	}
	if _, err := onlineState(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"online": "yes"}}}); err == nil {
		t.Errorf("an online that is not a bool gave no error")
	}
}
