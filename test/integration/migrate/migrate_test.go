// Package migrate_test checks stratos migrate against a real kube-apiserver: every
// object it makes of the Karpenter manifests in internal/migrate/testdata is accepted by
// the Stratos CRDs, with strict field validation, and a cluster that runs Karpenter is
// read as its files are.
package migrate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/migrate"
	"github.com/stratos-sh/stratos/internal/migrate/cli"
	"github.com/stratos-sh/stratos/test/harness"
)

func testdata(t *testing.T) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "internal", "migrate", "testdata")
}

func convertFile(t *testing.T, path string, opts migrate.Options) *migrate.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objects, err := migrate.Decode(f, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return migrate.Convert(objects, opts)
}

// written returns the objects of a result as migrate writes them.
func written(t *testing.T, res *migrate.Result) []*unstructured.Unstructured {
	t.Helper()
	var out bytes.Buffer
	if err := res.WriteYAML(&out); err != nil {
		t.Fatal(err)
	}
	objects, err := migrate.Decode(&out, "output")
	if err != nil {
		t.Fatal(err)
	}
	var us []*unstructured.Unstructured
	for _, o := range objects {
		us = append(us, &unstructured.Unstructured{Object: o.Raw})
	}
	return us
}

func TestEveryConvertedObjectIsAccepted(t *testing.T) {
	env := harness.StartT(t)
	files, err := filepath.Glob(filepath.Join(testdata(t), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, file := range files {
		if filepath.Ext(file[:len(file)-len(".yaml")]) == ".golden" {
			continue
		}
		for _, standby := range []*int32{nil, ptr.To[int32](3)} {
			for _, obj := range written(t, convertFile(t, file, migrate.Options{Standby: standby})) {
				t.Run(filepath.Base(file)+"/"+obj.GetKind()+"/"+obj.GetName(), func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					if err := env.Client.Create(ctx, obj, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
						t.Fatalf("the API server refused what migrate wrote: %v", err)
					}
				})
				created++
			}
		}
	}
	if created == 0 {
		t.Fatal("migrate wrote no object to check")
	}
}

// karpenterCRD is a CustomResourceDefinition of Karpenter's kind that keeps whatever it
// is given: enough to serve Karpenter's objects for migrate to read.
func karpenterCRD(group, plural, kind string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

func TestClusterIsReadAsItsFiles(t *testing.T) {
	// Karpenter's CRDs, not Stratos's, are what this cluster serves.
	env := harness.StartWithoutCRDsT(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := harness.InstallCRDs(env.Config,
		karpenterCRD("karpenter.sh", "nodepools", "NodePool"),
		karpenterCRD("karpenter.k8s.aws", "ec2nodeclasses", "EC2NodeClass"),
	); err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(testdata(t), "kubelet.yaml"), filepath.Join(testdata(t), "workloads.yaml")}
	var fromFiles []migrate.Object
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		objects, err := migrate.Decode(f, "cluster")
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objects {
			u := &unstructured.Unstructured{Object: o.Raw}
			switch u.GetKind() {
			case "ConfigMap", "Provisioner":
				continue // not listed from a cluster
			case "Pod":
				if len(u.GetOwnerReferences()) > 0 {
					continue // an owner that does not exist would be garbage-collected
				}
			}
			if u.GetNamespace() != "" {
				ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": u.GetNamespace()}}}
				_ = env.Client.Create(ctx, ns)
			}
			if err := env.Client.Create(ctx, u.DeepCopy()); err != nil {
				t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
			}
			fromFiles = append(fromFiles, migrate.Object{Source: "cluster", Raw: o.Raw})
		}
	}
	fromCluster, err := cli.ReadCluster(ctx, env.Config)
	if err != nil {
		t.Fatal(err)
	}
	want, got := migrate.Convert(fromFiles, migrate.Options{}), migrate.Convert(fromCluster, migrate.Options{})
	if diff := cmp.Diff(want.NodePools, got.NodePools); diff != "" {
		t.Errorf("pools (-files +cluster):\n%s", diff)
	}
	if diff := cmp.Diff(want.EC2NodeClasses, got.EC2NodeClasses); diff != "" {
		t.Errorf("classes (-files +cluster):\n%s", diff)
	}
	if diff := cmp.Diff(want.Report.Workloads, got.Report.Workloads); diff != "" {
		t.Errorf("workloads (-files +cluster):\n%s", diff)
	}
	if len(got.NodePools) != 2 || len(got.Report.Workloads) == 0 {
		t.Errorf("want the two pools and the workloads of the files, got %d pools and %d workload findings", len(got.NodePools), len(got.Report.Workloads))
	}
}
