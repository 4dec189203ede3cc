// Package simapi installs the CRDs of the simulator's Cluster API providers (the types
// of package v1alpha1), generated into crds/ by controller-gen and embedded here.
package simapi

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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

// Install creates the CRDs, or updates those that exist, and waits until the API server's
// discovery serves them: Established is not enough, as a client whose RESTMapper asks
// between the two finds no such kind.
func Install(cfg *rest.Config) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds, MaxTime: time.Minute, PollInterval: 100 * time.Millisecond})
	return err
}
