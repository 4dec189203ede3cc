package simprovider

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

func simMachine(labels map[string]string, failureDomain string) *v1alpha1.SimMachine {
	return &v1alpha1.SimMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: "uid-1", Labels: labels},
		Spec:       v1alpha1.SimMachineSpec{FailureDomain: failureDomain},
	}
}

// requirement returns the values of the requirement on key, and whether there is one.
func requirement(reqs []corev1.NodeSelectorRequirement, key string) ([]string, bool) {
	for _, r := range reqs {
		if r.Key == key && r.Operator == corev1.NodeSelectorOpIn {
			return r.Values, true
		}
	}
	return nil, false
}

func TestLaunchRequestAsksForTheLabelledTypeOnDemand(t *testing.T) {
	pods := int32(12)
	data := &BootstrapData{Labels: map[string]string{"team": "a"}, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}, MaxPods: &pods}
	req, err := launchRequest(simMachine(map[string]string{corev1.LabelInstanceTypeStable: "m5.large"}, ""), nil, data, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := requirement(req.Requirements, corev1.LabelInstanceTypeStable); len(v) != 1 || v[0] != "m5.large" {
		t.Errorf("instance type requirement = %v, want m5.large", v)
	}
	if v, _ := requirement(req.Requirements, v1beta1.LabelCapacityType); len(v) != 1 || v[0] != v1beta1.CapacityTypeOnDemand {
		t.Errorf("capacity type requirement = %v, want on-demand", v)
	}
	if _, ok := requirement(req.Requirements, corev1.LabelTopologyZone); ok {
		t.Error("a zone requirement without any zone asked for")
	}
	if req.ClientToken != "uid-1" {
		t.Errorf("client token = %q, want the SimMachine's UID", req.ClientToken)
	}
	if req.Labels["team"] != "a" || len(req.Taints) != 1 || req.Kubelet == nil || *req.Kubelet.MaxPods != 12 {
		t.Errorf("labels %v, taints %v, kubelet %v: want the bootstrap data's", req.Labels, req.Taints, req.Kubelet)
	}
	if req.Tags[v1beta1.TagCluster] != "dev" || req.Tags[TagSimMachineUID] != "uid-1" || req.Tags[TagSimMachine] != "ns/m" {
		t.Errorf("tags = %v, want the cluster, the SimMachine and its UID", req.Tags)
	}
}

func TestLaunchRequestWithoutAnInstanceTypeIsRefused(t *testing.T) {
	_, err := launchRequest(simMachine(nil, ""), nil, &BootstrapData{}, "")
	if err == nil || !strings.Contains(err.Error(), corev1.LabelInstanceTypeStable) {
		t.Errorf("error = %v, want one naming the instance type label", err)
	}
}

func TestZoneComesFromTheLabelThenTheSpecThenTheMachine(t *testing.T) {
	machine := &clusterv1.Machine{Spec: clusterv1.MachineSpec{FailureDomain: "from-machine"}}
	for _, c := range []struct {
		name string
		m    *v1alpha1.SimMachine
		want string
	}{
		{"label", simMachine(map[string]string{corev1.LabelTopologyZone: "from-label"}, "from-spec"), "from-label"},
		{"spec", simMachine(nil, "from-spec"), "from-spec"},
		{"machine", simMachine(nil, ""), "from-machine"},
	} {
		if got := zoneOf(c.m, machine); got != c.want {
			t.Errorf("%s: zone = %q, want %q", c.name, got, c.want)
		}
	}
	if got := zoneOf(simMachine(nil, ""), nil); got != "" {
		t.Errorf("zone without any = %q, want none", got)
	}
}

func TestPowerIsOnFromRunningUntilStopped(t *testing.T) {
	for state, want := range map[cloudprovider.InstanceState]bool{
		cloudprovider.StatePending: false, cloudprovider.StateRunning: true, cloudprovider.StateStopping: true,
		cloudprovider.StateStopped: false, cloudprovider.StateShuttingDown: false, cloudprovider.StateTerminated: false,
	} {
		if got := poweredOn(state); got != want {
			t.Errorf("poweredOn(%s) = %t, want %t", state, got, want)
		}
	}
}
