package clusterapi

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// StartInstances powers on the infrastructure machines of the Machines; one powered on
// is left alone.
func (p *Provider) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return p.powerEach(ctx, cloudprovider.OpStart, ids, Power.PowerOn), nil
}

// StopInstances powers off the infrastructure machines of the Machines; one powered off
// is left alone. No infrastructure hibernates: a hibernating stop is Unsupported.
func (p *Provider) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	if hibernate {
		errs := make(map[string]error, len(ids))
		for _, id := range ids {
			errs[id] = cloudprovider.NewError(cloudprovider.CodeUnsupported, cloudprovider.OpStop, id, "Cluster API machines cannot hibernate")
		}
		return errs, nil
	}
	return p.powerEach(ctx, cloudprovider.OpStop, ids, Power.PowerOff), nil
}

// ForceStopInstances powers off the infrastructure machines as StopInstances does: the
// power interfaces have no gentler and no harder switch.
func (p *Provider) ForceStopInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return p.powerEach(ctx, cloudprovider.OpStop, ids, Power.PowerOff), nil
}

// TerminateInstances deletes the Machines; CAPI's controllers then release the
// infrastructure, and the garbage collector removes the bootstrap config and the
// infrastructure machine the Machine owns. A Machine that is gone already is terminated.
func (p *Provider) TerminateInstances(ctx context.Context, ids []string) (map[string]error, error) {
	errs := map[string]error{}
	for _, id := range ids {
		machine, err := p.ownMachine(ctx, cloudprovider.OpTerminate, id)
		if cloudprovider.CodeOf(err) == cloudprovider.CodeNotFound {
			continue
		}
		if err != nil {
			errs[id] = err
			continue
		}
		if err := p.client.Delete(ctx, machine); err != nil && !apierrors.IsNotFound(err) {
			errs[id] = classify(cloudprovider.OpTerminate, id, err)
		}
	}
	return errs, nil
}

// powerEach applies a power switch to the infrastructure machine of each Machine.
func (p *Provider) powerEach(ctx context.Context, op string, ids []string, switchPower func(Power, context.Context, client.Client, *unstructured.Unstructured) error) map[string]error {
	errs := map[string]error{}
	for _, id := range ids {
		if err := p.switchPower(ctx, op, id, switchPower); err != nil {
			errs[id] = err
		}
	}
	return errs
}

// switchPower applies a power switch to one Machine's infrastructure machine. A Machine
// being deleted cannot be switched; one whose infrastructure kind Stratos cannot power
// is Unsupported.
func (p *Provider) switchPower(ctx context.Context, op, id string, switchPower func(Power, context.Context, client.Client, *unstructured.Unstructured) error) error {
	machine, err := p.ownMachine(ctx, op, id)
	if err != nil {
		return err
	}
	if !machine.DeletionTimestamp.IsZero() {
		return cloudprovider.NewError(cloudprovider.CodeInvalidState, op, id, "the Machine is being deleted")
	}
	gk := machine.Spec.InfrastructureRef.GroupKind()
	power, ok := p.powers[gk]
	if !ok {
		return cloudprovider.NewError(cloudprovider.CodeUnsupported, op, id, "Stratos cannot power %s machines off and on", gk)
	}
	infra, err := p.infrastructureMachine(ctx, op, machine)
	if apierrors.IsNotFound(err) {
		return cloudprovider.NewError(cloudprovider.CodeInvalidState, op, id, "the infrastructure machine %s %s does not exist", gk.Kind, machine.Spec.InfrastructureRef.Name)
	}
	if err != nil {
		return classify(op, id, err)
	}
	return classify(op, id, switchPower(power, ctx, p.client, infra))
}

// ownMachine reads the Machine of an instance ID: NotFound when there is none, NotOwned
// when it is not the cluster's. A Machine the client's cache does not have is looked
// for on the API server before it is called gone: a claim deleted right after its
// launch must not take a Machine created a moment ago for terminated.
func (p *Provider) ownMachine(ctx context.Context, op, id string) (*clusterv1.Machine, error) {
	key, ok := machineKey(id)
	if !ok {
		return nil, cloudprovider.NewError(cloudprovider.CodeNotFound, op, id, "not the namespace/name of a Machine")
	}
	machine := &clusterv1.Machine{}
	err := p.client.Get(ctx, key, machine)
	if apierrors.IsNotFound(err) && p.readsAround {
		err = p.reader.Get(ctx, key, machine)
	}
	if err != nil {
		return nil, classify(op, id, err)
	}
	if machine.Labels[v1beta1.TagCluster] != p.clusterName {
		return nil, cloudprovider.NewError(cloudprovider.CodeNotOwned, op, id, "the Machine is not labelled %s=%s", v1beta1.TagCluster, p.clusterName)
	}
	return machine, nil
}
