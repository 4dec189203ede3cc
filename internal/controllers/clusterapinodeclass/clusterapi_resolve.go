package clusterapinodeclass

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capicontract"
	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
	"github.com/stratos-sh/stratos/internal/nodeclass"
)

// template is one template a class names, and for what.
type template struct {
	role string // "bootstrap template", "infrastructure template", or that of an instance type
	ref  v1beta1.ClusterAPITemplateReference
}

// templatesOf lists the templates a class names: its bootstrap and infrastructure
// templates, then its instance types' own infrastructure templates, each once.
func templatesOf(class *v1beta1.ClusterAPINodeClass) []template {
	out := []template{
		{"bootstrap template", class.Spec.BootstrapTemplateRef},
		{"infrastructure template", class.Spec.InfrastructureTemplateRef},
	}
	for _, t := range class.Spec.InstanceTypes {
		if t.InfrastructureTemplateRef == nil {
			continue
		}
		if !slices.ContainsFunc(out, func(o template) bool { return o.ref == *t.InfrastructureTemplateRef }) {
			out = append(out, template{fmt.Sprintf("infrastructure template of instance type %s", t.Name), *t.InfrastructureTemplateRef})
		}
	}
	return out
}

// checkCluster checks that the Cluster exists.
func (r *ClusterAPIReconciler) checkCluster(ctx context.Context, ref v1beta1.ClusterAPIClusterReference) (*failure, error) {
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &clusterv1.Cluster{})
	switch {
	case err == nil:
		return nil, nil
	case meta.IsNoMatchError(err):
		return &failure{ReasonClusterAPINotInstalled, fmt.Sprintf("the API server does not serve Cluster API's %s (is Cluster API installed?)", clusterv1.GroupVersion.WithKind("Cluster"))}, nil
	case apierrors.IsNotFound(err):
		return &failure{ReasonClusterNotFound, fmt.Sprintf("Cluster %s/%s does not exist", ref.Namespace, ref.Name)}, nil
	case apierrors.IsForbidden(err):
		return &failure{ReasonNotPermitted, fmt.Sprintf("Cluster %s/%s cannot be read: %v", ref.Namespace, ref.Name, err)}, nil
	}
	return nil, err
}

// checkTemplate checks that a template's kind is served and contract-versioned, and
// that the template exists in namespace. It is read as unstructured: its kind can be
// anything.
func (r *ClusterAPIReconciler) checkTemplate(ctx context.Context, namespace string, t template) (*failure, error) {
	gvk, err := r.Resolver.GroupVersionKind(ctx, t.ref.APIGroup, t.ref.Kind)
	switch {
	case errors.Is(err, capicontract.ErrKindNotServed):
		return &failure{ReasonTemplateKindUnknown, fmt.Sprintf("the %s %s.%s %s: the API server serves no such kind (is its provider installed?)", t.role, t.ref.Kind, t.ref.APIGroup, t.ref.Name)}, nil
	case errors.Is(err, capicontract.ErrNoContractVersion):
		return &failure{ReasonTemplateNotContractVersioned, fmt.Sprintf("the %s %s.%s %s: %v", t.role, t.ref.Kind, t.ref.APIGroup, t.ref.Name, err)}, nil
	case apierrors.IsForbidden(err):
		return &failure{ReasonNotPermitted, fmt.Sprintf("the %s %s.%s %s: %v", t.role, t.ref.Kind, t.ref.APIGroup, t.ref.Name, err)}, nil
	case err != nil:
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: t.ref.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return &failure{ReasonTemplateNotFound, fmt.Sprintf("the %s %s %s/%s does not exist", t.role, gvk.GroupKind(), namespace, t.ref.Name)}, nil
	case apierrors.IsForbidden(err):
		return &failure{ReasonNotPermitted, fmt.Sprintf("the %s %s %s/%s cannot be read (is its group in the chart's clusterAPI values?): %v", t.role, gvk.GroupKind(), namespace, t.ref.Name, err)}, nil
	}
	return nil, err
}

// standbyOf is Supported when Stratos has a power interface for the kind of machine
// every infrastructure template of the class makes (the template's kind less its
// Template suffix, in the template's group), else Unsupported.
func standbyOf(class *v1beta1.ClusterAPINodeClass, powers clusterapi.Powers) string {
	for _, t := range templatesOf(class)[1:] {
		machine := schema.GroupKind{Group: t.ref.APIGroup, Kind: nodeclass.InfrastructureMachineKind(t.ref.Kind)}
		if _, ok := powers[machine]; !ok {
			return v1beta1.ClusterAPIStandbyUnsupported
		}
	}
	return v1beta1.ClusterAPIStandbySupported
}

// resolvedMessage says what a class resolved to, for its Ready condition.
func resolvedMessage(class *v1beta1.ClusterAPINodeClass) string {
	var kinds []string
	for _, t := range templatesOf(class) {
		kinds = append(kinds, fmt.Sprintf("%s %s.%s %s", t.role, t.ref.Kind, t.ref.APIGroup, t.ref.Name))
	}
	standby := "its infrastructure machines can be powered off and on, so its pools keep warm pools"
	if class.Status.Standby != v1beta1.ClusterAPIStandbySupported {
		standby = "Stratos cannot power its infrastructure machines off and on, so its pools keep no warm pool"
	}
	return fmt.Sprintf("Cluster %s/%s; %s; %s", class.Spec.Cluster.Namespace, class.Spec.Cluster.Name, strings.Join(kinds, ", "), standby)
}
