// Package capicontract finds the API version of a Cluster API contract-versioned
// reference: CAPI v1beta2 names templates, bootstrap configs and infrastructure machines
// by API group and kind only, and the version is the one the kind's CRD declares for the
// contract in its label cluster.x-k8s.io/v1beta2 (a list such as v1alpha1_v1beta1).
package capicontract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Label is the CRD label that lists the versions of a kind which follow CAPI's v1beta2
// contract.
var Label = clusterv1.GroupVersion.String()

var (
	// ErrKindNotServed: the API server serves no such group and kind (its provider is
	// not installed).
	ErrKindNotServed = errors.New("the API server serves no such kind")
	// ErrNoContractVersion: the kind's CRD does not say which of its versions follow
	// CAPI's v1beta2 contract.
	ErrNoContractVersion = errors.New("its CRD names no version for Cluster API's v1beta2 contract")
)

// Resolver looks kinds up: Mapper finds the kind's resource (and so its CRD's name),
// Reader reads the CRD's metadata (a get of one CustomResourceDefinition; an uncached
// reader needs no list or watch permission).
type Resolver struct {
	Mapper meta.RESTMapper
	Reader client.Reader
}

// GroupVersionKind returns the group, version and kind to read an object of group and
// kind at: the latest version its CRD lists for the contract. The errors wrap
// ErrKindNotServed or ErrNoContractVersion when the kind cannot be used; others are the
// API server's.
func (r Resolver) GroupVersionKind(ctx context.Context, group, kind string) (schema.GroupVersionKind, error) {
	gk := schema.GroupKind{Group: group, Kind: kind}
	mapping, err := r.Mapper.RESTMapping(gk)
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionKind{}, fmt.Errorf("%s: %w", gk, ErrKindNotServed)
	}
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: mapping.Resource.Resource + "." + group}, crd); err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("reading the CRD of %s: %w", gk, err)
	}
	v, ok := LatestVersion(crd.GetLabels())
	if !ok {
		return schema.GroupVersionKind{}, fmt.Errorf("%s: %w (label %s)", gk, ErrNoContractVersion, Label)
	}
	return gk.WithVersion(v), nil
}

// LatestVersion is the latest of the versions a CRD's labels list for the contract, by
// Kubernetes' ordering of versions (v1 after v1beta2 after v1alpha1).
func LatestVersion(labels map[string]string) (string, bool) {
	var versions []string
	for _, v := range strings.Split(labels[Label], "_") {
		if v != "" {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return "", false
	}
	return slices.MaxFunc(versions, version.CompareKubeAwareVersionStrings), true
}
