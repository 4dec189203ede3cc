package clusterapi

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// launch is what Create makes for a claim: the Machine and, owned by it, the bootstrap
// config and the infrastructure machine.
type launch struct {
	machine   *clusterv1.Machine
	bootstrap *unstructured.Unstructured
	infra     *unstructured.Unstructured
}

// Create launches a Machine of the cheapest offering of the class that meets the request
// and is not marked unavailable. The Machine is created first, so that a crash leaves
// nothing without an owner; then the bootstrap config and the infrastructure machine,
// owned by it, so that deleting the Machine removes them. The Machine has the claim's
// name: a launch redone with the same client token finds it and creates what is missing,
// whatever offering it chose; a Machine of that name made by another launch is an error.
func (p *Provider) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	class, err := asClass(req.NodeClass)
	if err != nil {
		return nil, err
	}
	name := req.Tags[v1beta1.TagNodeClaim]
	if name == "" {
		return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpCreate, "", "the launch has no %s tag to name its Machine", v1beta1.TagNodeClaim)
	}
	key := client.ObjectKey{Namespace: class.Spec.Cluster.Namespace, Name: name}
	existing := &clusterv1.Machine{}
	switch err := p.reader.Get(ctx, key, existing); {
	case err == nil:
		return p.resume(ctx, class, existing, req)
	case !apierrors.IsNotFound(err):
		return nil, classify(cloudprovider.OpCreate, InstanceID(key.Namespace, key.Name), err)
	}
	types, err := InstanceTypesOf(class)
	if err != nil {
		return nil, err
	}
	chosen, offering, err := choose(class.Name, types, req)
	if err != nil {
		return nil, err
	}
	l, err := p.plan(ctx, class, key, chosen.Name, offering.Zone, req)
	if err != nil {
		return nil, err
	}
	if err := p.client.Create(ctx, l.machine); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Another launch of the claim got there first: judge its Machine.
			if err := p.reader.Get(ctx, key, existing); err != nil {
				return nil, classify(cloudprovider.OpCreate, InstanceID(key.Namespace, key.Name), err)
			}
			return p.resume(ctx, class, existing, req)
		}
		return nil, classify(cloudprovider.OpCreate, InstanceID(key.Namespace, key.Name), err)
	}
	if err := p.createOwned(ctx, l); err != nil {
		return nil, err
	}
	return p.instanceOf(ctx, l.machine)
}

// resume takes over the Machine an earlier launch with the same client token created,
// creating the bootstrap config and infrastructure machine if that launch stopped before
// it had. The templates are read only then, so that a launch that finished is found
// even if they have gone since. A Machine being deleted is left to go.
func (p *Provider) resume(ctx context.Context, class *v1beta1.ClusterAPINodeClass, machine *clusterv1.Machine, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	id := InstanceID(machine.Namespace, machine.Name)
	if token := machine.Annotations[AnnotationClientToken]; token != req.ClientToken {
		return nil, cloudprovider.NewError(cloudprovider.CodeInvalidState, cloudprovider.OpCreate, id,
			"Machine %s already exists and is another launch's (client token %q, not %q)", id, token, req.ClientToken)
	}
	if !machine.DeletionTimestamp.IsZero() {
		return p.instanceOf(ctx, machine)
	}
	complete, err := p.hasReferents(ctx, machine)
	if err != nil {
		return nil, classify(cloudprovider.OpCreate, id, err)
	}
	if !complete {
		l, err := p.plan(ctx, class, client.ObjectKeyFromObject(machine), machine.Labels[corev1.LabelInstanceTypeStable], machine.Spec.FailureDomain, req)
		if err != nil {
			return nil, err
		}
		l.machine = machine
		if err := p.createOwned(ctx, l); err != nil {
			return nil, err
		}
	}
	return p.instanceOf(ctx, machine)
}

// hasReferents reports whether the bootstrap config and the infrastructure machine a
// Machine refers to both exist.
func (p *Provider) hasReferents(ctx context.Context, machine *clusterv1.Machine) (bool, error) {
	for _, ref := range []clusterv1.ContractVersionedObjectReference{machine.Spec.Bootstrap.ConfigRef, machine.Spec.InfrastructureRef} {
		v, err := p.contractVersion(ctx, cloudprovider.OpCreate, ref.GroupKind())
		if err != nil {
			return false, err
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(ref.GroupKind().WithVersion(v))
		if err := p.reader.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: ref.Name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
	}
	return true, nil
}

// plan reads the class's templates and makes the three objects of a launch of a type
// in a zone. A template that does not exist is an InvalidParameter error naming it: the
// launch waits for the class or the template to change, creating nothing.
func (p *Provider) plan(ctx context.Context, class *v1beta1.ClusterAPINodeClass, key client.ObjectKey, typeName, zone string, req *cloudprovider.CreateRequest) (*launch, error) {
	bootstrapTemplate, err := p.template(ctx, cloudprovider.OpCreate, key.Namespace, class.Spec.BootstrapTemplateRef)
	if err != nil {
		return nil, err
	}
	infraTemplate, err := p.template(ctx, cloudprovider.OpCreate, key.Namespace, infrastructureTemplateRef(class, typeName))
	if err != nil {
		return nil, err
	}
	labels := machineLabels(req.Tags, class.Spec.Cluster.Name, typeName, zone)
	bootstrap, err := fromTemplate(bootstrapTemplate, key.Namespace, key.Name, labels)
	if err != nil {
		return nil, err
	}
	if err := withNodeRegistration(bootstrap, req.Labels, req.Taints, req.Kubelet); err != nil {
		return nil, err
	}
	infra, err := fromTemplate(infraTemplate, key.Namespace, key.Name, labels)
	if err != nil {
		return nil, err
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace,
			Name:      key.Name,
			Labels:    labels,
			Annotations: map[string]string{
				AnnotationClientToken: req.ClientToken,
				// Stratos drains a node before it deletes its Machine; a second drain by
				// CAPI would fight the first over the same pods.
				clusterv1.ExcludeNodeDrainingAnnotation: "true",
			},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName:       class.Spec.Cluster.Name,
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: reference(bootstrap)},
			InfrastructureRef: reference(infra),
			Version:           class.Spec.Version,
			FailureDomain:     zone,
		},
	}
	return &launch{machine: machine, bootstrap: bootstrap, infra: infra}, nil
}

// machineLabels are the labels of the three objects of a launch: the launch's tags
// (ownership: cluster, pool, claim), CAPI's cluster label, and the type and zone, by
// which Describe tells them and the simulator's infrastructure launches.
func machineLabels(tags map[string]string, clusterName, typeName, zone string) map[string]string {
	labels := maps.Clone(tags)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[clusterv1.ClusterNameLabel] = clusterName
	labels[corev1.LabelInstanceTypeStable] = typeName
	labels[corev1.LabelTopologyZone] = zone
	return labels
}

// reference is a Machine's contract-versioned reference to an object.
func reference(obj *unstructured.Unstructured) clusterv1.ContractVersionedObjectReference {
	gvk := obj.GroupVersionKind()
	return clusterv1.ContractVersionedObjectReference{APIGroup: gvk.Group, Kind: gvk.Kind, Name: obj.GetName()}
}

// createOwned creates the bootstrap config and the infrastructure machine of a launch,
// owned by its Machine (controller and blocking its deletion, so that the garbage
// collector removes them before it), leaving those that exist already.
func (p *Provider) createOwned(ctx context.Context, l *launch) error {
	owner := metav1.OwnerReference{
		APIVersion:         clusterv1.GroupVersion.String(),
		Kind:               "Machine",
		Name:               l.machine.Name,
		UID:                l.machine.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	id := InstanceID(l.machine.Namespace, l.machine.Name)
	for _, obj := range []*unstructured.Unstructured{l.bootstrap, l.infra} {
		obj.SetOwnerReferences([]metav1.OwnerReference{owner})
		if err := p.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return classify(cloudprovider.OpCreate, id, err)
		}
	}
	return nil
}
