package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/test/manifest"
)

// decodeAll reads every object of a multi-document YAML stream.
func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objects, err := manifest.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decoding YAML: %v", err)
	}
	return objects
}

// decodeFile reads every object of a YAML file.
func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, data)
}

// patched returns base with a JSON merge patch, written in YAML, applied, and renamed
// to name unless the patch names the object itself.
func patched(t *testing.T, base, patchYAML, name string) *unstructured.Unstructured {
	t.Helper()
	baseJSON, err := yaml.YAMLToJSON([]byte(base))
	if err != nil {
		t.Fatalf("base: %v", err)
	}
	patchJSON, err := yaml.YAMLToJSON([]byte(patchYAML))
	if err != nil {
		t.Fatalf("patch %q: %v", patchYAML, err)
	}
	merged, err := jsonpatch.MergePatch(baseJSON, patchJSON)
	if err != nil {
		t.Fatalf("patch %q: %v", patchYAML, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(merged); err != nil {
		t.Fatal(err)
	}
	if named, _, _ := unstructured.NestedString(patchObject(t, patchJSON), "metadata", "name"); named == "" {
		obj.SetName(name)
	}
	return obj
}

// patchObject decodes a JSON merge patch.
func patchObject(t *testing.T, patchJSON []byte) map[string]any {
	t.Helper()
	patch := map[string]any{}
	if err := json.Unmarshal(patchJSON, &patch); err != nil {
		t.Fatalf("patch %s: %v", patchJSON, err)
	}
	return patch
}
