package simprovider

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

// Tags the providers put on the instances they launch, to find a SimMachine's instance
// when its ID was never recorded (a launch whose status write was lost).
const (
	TagSimMachine    = v1alpha1.Group + "/simmachine"
	TagSimMachineUID = v1alpha1.Group + "/simmachine-uid"
)

// launchRequest is the fake cloud launch of a SimMachine: an on-demand instance of the
// type its instance-type label names, in its zone, whose kubelet registers with the
// bootstrap data's labels and taints. The SimMachine's UID is the client token, so that
// a launch repeated after a lost status write returns the same instance.
func launchRequest(m *v1alpha1.SimMachine, machine *clusterv1.Machine, data *BootstrapData, clusterTag string) (*cloudprovider.CreateRequest, error) {
	instanceType := m.Labels[corev1.LabelInstanceTypeStable]
	if instanceType == "" {
		return nil, fmt.Errorf("the SimMachine has no %s label naming the instance type to launch", corev1.LabelInstanceTypeStable)
	}
	requirements := []corev1.NodeSelectorRequirement{
		{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{instanceType}},
		{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}},
	}
	if zone := zoneOf(m, machine); zone != "" {
		requirements = append(requirements, corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}})
	}
	req := &cloudprovider.CreateRequest{
		ClientToken:  string(m.UID),
		Requirements: requirements,
		Labels:       data.Labels,
		Taints:       data.Taints,
		Tags: map[string]string{
			TagSimMachine:    m.Namespace + "/" + m.Name,
			TagSimMachineUID: string(m.UID),
		},
	}
	if data.MaxPods != nil {
		req.Kubelet = &v1beta1.KubeletConfiguration{MaxPods: data.MaxPods}
	}
	if clusterTag != "" {
		req.Tags[v1beta1.TagCluster] = clusterTag
	}
	return req, nil
}

// zoneOf is where a SimMachine launches: its zone label, its own failure domain, or its
// Machine's; empty lets the cloud choose the cheapest zone.
func zoneOf(m *v1alpha1.SimMachine, machine *clusterv1.Machine) string {
	switch {
	case m.Labels[corev1.LabelTopologyZone] != "":
		return m.Labels[corev1.LabelTopologyZone]
	case m.Spec.FailureDomain != "":
		return m.Spec.FailureDomain
	case machine != nil:
		return machine.Spec.FailureDomain
	}
	return ""
}

// addressesOf are the addresses the kubelet of instance id reports: its private IP and
// host name.
func addressesOf(cloud Cloud, id string) clusterv1.MachineAddresses {
	_, views := cloud.NodeViews()
	for _, v := range views {
		if v.InstanceID != id {
			continue
		}
		var addresses clusterv1.MachineAddresses
		if v.PrivateIP != "" {
			addresses = append(addresses, clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: v.PrivateIP})
		}
		if v.NodeName != "" {
			addresses = append(addresses,
				clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: v.NodeName},
				clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: v.NodeName})
		}
		return addresses
	}
	return nil
}
