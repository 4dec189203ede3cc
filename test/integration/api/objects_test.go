package api_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// decodeAll reads every object of a multi-document YAML stream.
func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objects
			}
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
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

// patched returns base with a JSON merge patch, written in YAML, applied, and renamed.
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
	obj.SetName(name)
	return obj
}
