// Package tools holds a check on the pins of the tool modules under hack/tools/ (each its
// own Go module, built by hack/tools.sh).
package tools

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// selected returns the version a go.mod selects for each module it names, its replace
// directives applied.
func selected(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	file, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, require := range file.Require {
		versions[require.Mod.Path] = require.Mod.Version
	}
	for _, replace := range file.Replace {
		if replace.Old.Version == "" || versions[replace.Old.Path] == replace.Old.Version {
			versions[replace.Old.Path] = replace.New.Path + "@" + replace.New.Version
			if replace.New.Path == replace.Old.Path {
				versions[replace.Old.Path] = replace.New.Version
			}
		}
	}
	return versions
}

// The control plane's binaries and the project share some 600 packages (client-go,
// apimachinery, their dependencies). Built with the same flags (-trimpath, no cgo), those
// compile once on a first run — but only when both modules select the same version of
// every module involved: one differing version recompiles it and everything above it.
func TestKubeToolsSelectTheProjectsModuleVersions(t *testing.T) {
	project := selected(t, filepath.Join("..", "..", "go.mod"))
	kube := selected(t, filepath.Join("kube", "go.mod"))
	for path, version := range project {
		if kubeVersion, ok := kube[path]; ok && kubeVersion != version {
			t.Errorf("%s: the project selects %s, hack/tools/kube %s; align them (go get %s@%s in hack/tools/kube, or move the Kubernetes release to the project's k8s.io libraries)",
				path, version, kubeVersion, path, version)
		}
	}
	if project["k8s.io/api"] != kube["k8s.io/api"] {
		t.Errorf("k8s.io/api: the project selects %s, hack/tools/kube %s", project["k8s.io/api"], kube["k8s.io/api"])
	}
}
