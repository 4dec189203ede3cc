package clusterapi

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// DescribeInstances describes the Machines of the IDs. A Machine that does not exist is
// absent from the answer; one without the cluster's stratos.sh/cluster label has
// NotOwned set.
func (p *Provider) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	out := make(map[string]*cloudprovider.Instance, len(ids))
	for _, id := range ids {
		key, ok := machineKey(id)
		if !ok {
			continue
		}
		machine := &clusterv1.Machine{}
		if err := p.client.Get(ctx, key, machine); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, classify(cloudprovider.OpGet, id, err)
		}
		instance, err := p.instanceOf(ctx, machine)
		if err != nil {
			return nil, err
		}
		out[id] = instance
	}
	return out, nil
}

// ListInstances returns the Machines of every namespace that carry every tag as a label.
// A Machine being deleted is listed (shutting-down), and so is a failed one: it exists
// until Stratos deletes it.
func (p *Provider) ListInstances(ctx context.Context, tags map[string]string) ([]*cloudprovider.Instance, error) {
	machines := &clusterv1.MachineList{}
	if err := p.client.List(ctx, machines, client.MatchingLabels(tags)); err != nil {
		return nil, classify(cloudprovider.OpList, "", err)
	}
	out := make([]*cloudprovider.Instance, 0, len(machines.Items))
	for i := range machines.Items {
		instance, err := p.instanceOf(ctx, &machines.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, instance)
	}
	return out, nil
}

// instanceOf is the instance a Machine is, with the power state of its infrastructure
// machine when Stratos can power it.
func (p *Provider) instanceOf(ctx context.Context, machine *clusterv1.Machine) (*cloudprovider.Instance, error) {
	power, err := p.powerState(ctx, machine)
	if err != nil {
		return nil, err
	}
	return instanceOfMachine(machine, p.clusterName, power), nil
}

// powerState is the power state of a Machine's infrastructure machine, or empty when
// there is no power interface for its kind, the Machine is going, or its infrastructure
// machine does not exist (yet) or cannot be read for lack of a CRD that follows CAPI's
// contract: the state then follows the Machine alone, rather than one Machine failing
// the description of all.
func (p *Provider) powerState(ctx context.Context, machine *clusterv1.Machine) (PowerState, error) {
	power, ok := p.powers[machine.Spec.InfrastructureRef.GroupKind()]
	if !ok || !machine.DeletionTimestamp.IsZero() {
		return "", nil
	}
	id := InstanceID(machine.Namespace, machine.Name)
	infra, err := p.infrastructureMachine(ctx, cloudprovider.OpGet, machine)
	if apierrors.IsNotFound(err) || errors.Is(err, cloudprovider.ErrInvalidParameter) {
		return "", nil
	}
	if err != nil {
		return "", classify(cloudprovider.OpGet, id, err)
	}
	state, err := power.State(ctx, p.client, infra)
	if err != nil {
		return "", classify(cloudprovider.OpGet, id, err)
	}
	return state, nil
}

// infrastructureMachine reads the infrastructure machine a Machine refers to.
func (p *Provider) infrastructureMachine(ctx context.Context, op string, machine *clusterv1.Machine) (*unstructured.Unstructured, error) {
	ref := machine.Spec.InfrastructureRef
	v, err := p.contractVersion(ctx, op, ref.GroupKind())
	if err != nil {
		return nil, err
	}
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(ref.GroupKind().WithVersion(v))
	if err := p.client.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: ref.Name}, infra); err != nil {
		return nil, err
	}
	return infra, nil
}

// instanceOfMachine is the instance a Machine is, given the power state of its
// infrastructure machine (empty: unknown or not powerable).
func instanceOfMachine(machine *clusterv1.Machine, clusterName string, power PowerState) *cloudprovider.Instance {
	zone := machine.Labels[corev1.LabelTopologyZone]
	if zone == "" {
		zone = machine.Spec.FailureDomain
	}
	instance := &cloudprovider.Instance{
		ID:           InstanceID(machine.Namespace, machine.Name),
		ProviderID:   machine.Spec.ProviderID,
		Type:         machine.Labels[corev1.LabelInstanceTypeStable],
		Zone:         zone,
		CapacityType: v1beta1.CapacityTypeOnDemand,
		State:        machineState(machine, power),
		Tags:         machine.Labels,
		LaunchTime:   machine.CreationTimestamp.Time,
		NotOwned:     machine.Labels[v1beta1.TagCluster] != clusterName,
	}
	if instance.State == cloudprovider.StateTerminated {
		instance.EndedAtLaunch = failureOf(machine)
	}
	return instance
}

// machineState is the instance state of a Machine: shutting-down once it is being
// deleted; terminated when CAPI reports that it failed for good (see failureOf), which
// no relaunch of the same Machine mends; with a power state, stopped when off, stopping when powering off,
// pending when powering on; otherwise pending until its Node registers (status.nodeRef),
// then running.
func machineState(machine *clusterv1.Machine, power PowerState) cloudprovider.InstanceState {
	switch {
	case !machine.DeletionTimestamp.IsZero():
		return cloudprovider.StateShuttingDown
	case failureOf(machine) != "":
		return cloudprovider.StateTerminated
	case power == PoweredOff:
		return cloudprovider.StateStopped
	case power == PoweringOff:
		return cloudprovider.StateStopping
	case power == PoweringOn:
		return cloudprovider.StatePending
	case machine.Status.NodeRef.IsDefined():
		return cloudprovider.StateRunning
	default:
		return cloudprovider.StatePending
	}
}
