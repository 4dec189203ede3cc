package api_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/test/harness"
)

// yamlBlock is a fenced YAML block of a Markdown page.
var yamlBlock = regexp.MustCompile("(?s)```ya?ml\n(.*?)```")

// The NodePools the docs show are what the API server takes: every fenced YAML block of
// README.md, CHANGELOG.md and docs/ that is a whole stratos.sh/v1beta1 object is created
// under strict field validation, and every NodePool fragment (a block that starts with
// spec: and holds a template, limits or disruption) is accepted as a patch of a minimal
// pool. The CHANGELOG's v1alpha1 example is the one block of another version.
func TestTheDocsExamplesAreAccepted(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"))
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
			for j, doc := range strings.Split(m[1], "\n---\n") {
				name := fmt.Sprintf("%s/%d.%d", filepath.Base(page), i, j)
				head := map[string]any{}
				if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
					continue // not YAML a user applies (a values file fragment, a template)
				}
				var obj *unstructured.Unstructured
				switch {
				case head["apiVersion"] == "stratos.sh/v1beta1":
					obj = &unstructured.Unstructured{Object: head}
				case head["apiVersion"] == nil && isPoolFragment(head):
					obj = patched(t, basePool, doc, "")
				default:
					continue
				}
				checked++
				obj.SetName(fmt.Sprintf("doc-%d", checked))
				t.Run(name, func(t *testing.T) {
					ctx := testContext(t)
					if err := env.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
						t.Fatalf("the API server refused the example:\n%s\n%v", doc, err)
					}
					t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
				})
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d examples found in the docs", checked)
	}
}

// isPoolFragment reports whether a block with no kind is part of a NodePool's spec.
func isPoolFragment(doc map[string]any) bool {
	spec, ok := doc["spec"].(map[string]any)
	if !ok || len(doc) != 1 {
		return false
	}
	for _, key := range []string{"template", "limits", "disruption", "standby", "windows"} {
		if _, ok := spec[key]; ok {
			return true
		}
	}
	return false
}
