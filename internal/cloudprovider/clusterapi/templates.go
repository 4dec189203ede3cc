package clusterapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capicontract"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// templateGroupKind is the group and kind a class's template reference names.
func templateGroupKind(ref v1beta1.ClusterAPITemplateReference) schema.GroupKind {
	return schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind}
}

// contractVersion is the version of a kind that CAPI's v1beta2 contract uses: the
// latest its CRD's contract label names, as CAPI's own controllers choose it. A kind no
// CRD serves, or whose CRD is not labelled for the contract, is an InvalidParameter
// error: nothing launches until the class or the cluster's providers change.
func (p *Provider) contractVersion(ctx context.Context, op string, gk schema.GroupKind) (string, error) {
	if v, ok := p.versions.get(gk, time.Now()); ok {
		return v, nil
	}
	resolver := capicontract.Resolver{Mapper: p.client.RESTMapper(), Reader: p.reader}
	gvk, err := resolver.GroupVersionKind(ctx, gk.Group, gk.Kind)
	switch {
	case errors.Is(err, capicontract.ErrKindNotServed):
		return "", cloudprovider.NewError(cloudprovider.CodeInvalidParameter, op, "", "no CRD serves kind %s: is its CAPI provider installed?", gk)
	case errors.Is(err, capicontract.ErrNoContractVersion), apierrors.IsNotFound(err):
		return "", cloudprovider.NewError(cloudprovider.CodeInvalidParameter, op, "", "%v: its kind does not follow CAPI's v1beta2 contract", err)
	case err != nil:
		return "", err
	}
	p.versions.put(gk, gvk.Version, time.Now())
	return gvk.Version, nil
}

// versionCacheTTL is how long a kind's contract version is kept: Describe reads an
// infrastructure machine for every powered Machine, and its CRD changes only when its
// provider is upgraded.
const versionCacheTTL = 5 * time.Minute

// versionCache keeps the contract versions of kinds for a while.
type versionCache struct {
	mu      sync.Mutex
	entries map[schema.GroupKind]versionEntry
}

type versionEntry struct {
	version string
	expires time.Time
}

func (c *versionCache) get(gk schema.GroupKind, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[gk]
	return e.version, ok && now.Before(e.expires)
}

func (c *versionCache) put(gk schema.GroupKind, version string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[schema.GroupKind]versionEntry{}
	}
	c.entries[gk] = versionEntry{version: version, expires: now.Add(versionCacheTTL)}
}

// template reads a template of the class's cluster namespace at its contract version. A
// missing template is an InvalidParameter error that names it.
func (p *Provider) template(ctx context.Context, op, namespace string, ref v1beta1.ClusterAPITemplateReference) (*unstructured.Unstructured, error) {
	gk := templateGroupKind(ref)
	v, err := p.contractVersion(ctx, op, gk)
	if err != nil {
		return nil, err
	}
	template := &unstructured.Unstructured{}
	template.SetGroupVersionKind(gk.WithVersion(v))
	if err := p.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, template); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, op, "", "%s %s/%s does not exist", gk.Kind, namespace, ref.Name)
		}
		return nil, fmt.Errorf("reading %s %s/%s: %w", gk.Kind, namespace, ref.Name, err)
	}
	return template, nil
}

// fromTemplate is the object a template makes, as CAPI's MachineSets make them: the kind
// without its Template suffix, at the template's version, with the template's
// spec.template.spec and metadata, the given labels over the template's, and CAPI's
// cloned-from annotations.
func fromTemplate(template *unstructured.Unstructured, namespace, name string, labels map[string]string) (*unstructured.Unstructured, error) {
	spec, _, err := unstructured.NestedMap(template.Object, "spec", "template", "spec")
	if err != nil {
		return nil, fmt.Errorf("%s %s: spec.template.spec: %w", template.GetKind(), template.GetName(), err)
	}
	templateLabels, _, _ := unstructured.NestedStringMap(template.Object, "spec", "template", "metadata", "labels")
	templateAnnotations, _, _ := unstructured.NestedStringMap(template.Object, "spec", "template", "metadata", "annotations")
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(template.GetAPIVersion())
	obj.SetKind(strings.TrimSuffix(template.GetKind(), "Template"))
	obj.SetNamespace(namespace)
	obj.SetName(name)
	if templateLabels == nil {
		templateLabels = map[string]string{}
	}
	maps.Copy(templateLabels, labels)
	obj.SetLabels(templateLabels)
	if templateAnnotations == nil {
		templateAnnotations = map[string]string{}
	}
	templateAnnotations[clusterv1.TemplateClonedFromNameAnnotation] = template.GetName()
	templateAnnotations[clusterv1.TemplateClonedFromGroupKindAnnotation] = template.GroupVersionKind().GroupKind().String()
	obj.SetAnnotations(templateAnnotations)
	if spec != nil {
		if err := unstructured.SetNestedMap(obj.Object, spec, "spec"); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// infrastructureTemplateRef is the infrastructure template of a type of the class: its
// own, or else the class's.
func infrastructureTemplateRef(class *v1beta1.ClusterAPINodeClass, typeName string) v1beta1.ClusterAPITemplateReference {
	for _, t := range class.Spec.InstanceTypes {
		if t.Name == typeName && t.InfrastructureTemplateRef != nil {
			return *t.InfrastructureTemplateRef
		}
	}
	return class.Spec.InfrastructureTemplateRef
}

// machineKind is the kind a template makes.
func machineKind(templateKind schema.GroupKind) schema.GroupKind {
	return schema.GroupKind{Group: templateKind.Group, Kind: strings.TrimSuffix(templateKind.Kind, "Template")}
}
