package clusterapi

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// OpResolve names the check of a class in errors.
const OpResolve = "Resolve"

// Resolution is what a ClusterAPINodeClass that can launch resolves to.
type Resolution struct {
	// InfrastructureKinds are the kinds of the infrastructure machines the class makes:
	// its template's, and those of its types' own templates.
	InfrastructureKinds []schema.GroupKind
	// Standby: Stratos can power every one of them off and on, so the class's pools may
	// keep warm pools.
	Standby bool
}

// Resolve checks that a class can launch, as the node class controller asks before it
// marks the class Ready: its instance types' prices parse, its Cluster exists, and its
// templates exist, of kinds whose CRDs follow CAPI's v1beta2 contract. It says which
// infrastructure kinds the class makes and whether Stratos can power them all. An
// InvalidParameter error (cloudprovider.ErrInvalidParameter) says what is wrong with the
// class or what it names, in words for a condition; any other error is transient.
func (p *Provider) Resolve(ctx context.Context, class *v1beta1.ClusterAPINodeClass) (*Resolution, error) {
	if _, err := InstanceTypesOf(class); err != nil {
		return nil, err
	}
	namespace := class.Spec.Cluster.Namespace
	cluster := &clusterv1.Cluster{}
	if err := p.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: class.Spec.Cluster.Name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, OpResolve, "", "Cluster %s/%s does not exist", namespace, class.Spec.Cluster.Name)
		}
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", namespace, class.Spec.Cluster.Name, err)
	}
	if _, err := p.template(ctx, OpResolve, namespace, class.Spec.BootstrapTemplateRef); err != nil {
		return nil, err
	}
	refs := []v1beta1.ClusterAPITemplateReference{class.Spec.InfrastructureTemplateRef}
	for _, t := range class.Spec.InstanceTypes {
		if t.InfrastructureTemplateRef != nil {
			refs = append(refs, *t.InfrastructureTemplateRef)
		}
	}
	resolution := &Resolution{Standby: true}
	seen := map[v1beta1.ClusterAPITemplateReference]bool{}
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		if _, err := p.template(ctx, OpResolve, namespace, ref); err != nil {
			return nil, err
		}
		kind := machineKind(templateGroupKind(ref))
		if !slices.Contains(resolution.InfrastructureKinds, kind) {
			resolution.InfrastructureKinds = append(resolution.InfrastructureKinds, kind)
			resolution.Standby = resolution.Standby && p.CanPower(kind)
		}
	}
	return resolution, nil
}
