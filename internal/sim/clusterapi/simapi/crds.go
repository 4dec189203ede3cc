// Package simapi installs the CRDs of the simulator's Cluster API providers (the types
// of package v1alpha1), generated into crds/ by controller-gen and embedded here.
package simapi

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

// CRDs returns the CustomResourceDefinitions of the sim.stratos.sh kinds, each labelled
// with the CAPI contract version it follows.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(crdFiles, "crds/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		data, err := crdFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path.Base(name), err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// Install creates the CRDs, or updates those that exist, and waits until the API server
// serves them. The client's scheme must know apiextensions.k8s.io/v1.
func Install(ctx context.Context, c client.Client) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := createOrUpdate(ctx, c, crd); err != nil {
			return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, c, crd.Name); err != nil {
			return fmt.Errorf("waiting for CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

func createOrUpdate(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) error {
	err := c.Create(ctx, crd.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, existing); err != nil {
		return err
	}
	existing.Labels, existing.Annotations, existing.Spec = crd.Labels, crd.Annotations, crd.Spec
	return c.Update(ctx, existing)
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
