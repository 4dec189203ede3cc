package chart_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/test/harness"
)

const capacityBufferCRD = "capacitybuffers.autoscaling.x-k8s.io"

// rendersCRD reports whether a rendering holds the CRD of that name, and how many CRDs
// it holds in all.
func rendersCRD(objects []*unstructured.Unstructured, name string) (found bool, crds int) {
	for _, crd := range ofKind(objects, "CustomResourceDefinition") {
		crds++
		found = found || crd.GetName() == name
	}
	return found, crds
}

// capacityBufferValues are the minimal values with capacityBuffers.installCRD set, and
// crds.install as given.
func capacityBufferValues(t *testing.T, mode any, installCRDs bool) string {
	return valuesFile(t, map[string]any{
		"settings":        map[string]any{"clusterName": "test"},
		"crds":            map[string]any{"install": installCRDs},
		"capacityBuffers": map[string]any{"installCRD": mode},
	})
}

// capacityBuffers.installCRD without a cluster (helm template, where lookup finds
// nothing): auto and true render the CapacityBuffer CRD, false leaves it out and only
// it; crds.install: false renders no CRD at all; any other mode is refused by the schema.
func TestCapacityBufferCRDModes(t *testing.T) {
	all := len(ofKind(render(t, minimal(t)), "CustomResourceDefinition"))
	for _, tc := range []struct {
		mode        any
		installCRDs bool
		want        bool
		crds        int
	}{
		{mode: "auto", installCRDs: true, want: true, crds: all},
		{mode: true, installCRDs: true, want: true, crds: all},
		{mode: "true", installCRDs: true, want: true, crds: all},
		{mode: false, installCRDs: true, want: false, crds: all - 1},
		{mode: "false", installCRDs: true, want: false, crds: all - 1},
		{mode: true, installCRDs: false, want: false, crds: 0},
	} {
		found, crds := rendersCRD(render(t, capacityBufferValues(t, tc.mode, tc.installCRDs)), capacityBufferCRD)
		if found != tc.want || crds != tc.crds {
			t.Errorf("installCRD %v (crds.install %v): rendered the CapacityBuffer CRD %v and %d CRDs; want %v and %d",
				tc.mode, tc.installCRDs, found, crds, tc.want, tc.crds)
		}
	}
	if _, err := renderErr(t, capacityBufferValues(t, "sometimes", true)); err == nil {
		t.Error("the schema accepted capacityBuffers.installCRD: sometimes")
	}
}

// capacityBuffers.installCRD: auto against a cluster (helm template --dry-run=server, so
// that lookup reads the API server): installs the CRD when the cluster has none, not
// when it has one installed by someone else (Cluster Autoscaler's, applied with kubectl),
// and again when the one there is this release's; true renders it in any case, which
// Helm refuses over a CRD of another owner.
func TestCapacityBufferCRDAutoHeedsTheCluster(t *testing.T) {
	env := harness.StartWithoutCRDsT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	renderOnErr := func(mode any) (bool, error) {
		t.Helper()
		out, err := helm(t, "template", "stratos", repoPath(t, "charts", "stratos"), "--namespace", releaseNamespace,
			"--dry-run=server", "--kubeconfig", kubeconfig, "--values", capacityBufferValues(t, mode, true))
		if err != nil {
			return false, err
		}
		found, _ := rendersCRD(decodeObjects(t, out), capacityBufferCRD)
		return found, nil
	}
	renderOn := func(mode any) bool {
		t.Helper()
		found, err := renderOnErr(mode)
		if err != nil {
			t.Fatalf("helm template --dry-run=server: %v", err)
		}
		return found
	}
	if !renderOn("auto") {
		t.Error("auto did not install the CRD in a cluster without one")
	}

	admin := adminClient(t, env)
	generated := readObjects(t, repoPath(t, "config", "crd", "bases", "autoscaling.x-k8s.io_capacitybuffers.yaml"))[0]
	installCRD(ctx, t, admin, generated)
	if renderOn("auto") {
		t.Error("auto installed the CRD over one this release does not manage")
	}
	// true renders it, and Helm then refuses to take over a CRD another owner
	// installed, with its ownership message (docs/buffers.md#install says how to adopt
	// it).
	if _, err := renderOnErr(true); err == nil || !strings.Contains(err.Error(), "cannot be imported into the current release") {
		t.Errorf("true over a CRD of another owner: %v, want Helm's refusal to import it", err)
	}

	ours := &unstructured.Unstructured{}
	ours.SetGroupVersionKind(generated.GroupVersionKind())
	if err := admin.Get(ctx, client.ObjectKey{Name: generated.GetName()}, ours); err != nil {
		t.Fatal(err)
	}
	ours.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "stratos", "meta.helm.sh/release-namespace": releaseNamespace})
	ours.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
	if err := admin.Update(ctx, ours); err != nil {
		t.Fatal(err)
	}
	if !renderOn("auto") {
		t.Error("auto did not render the CRD this release installed: an upgrade would stop updating it")
	}
}
