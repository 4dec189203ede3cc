// Package manifest reads multi-document YAML (or JSON) streams into unstructured objects,
// for tests that check what a chart renders or what a samples folder holds.
package manifest

import (
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode returns every object of the stream in order; empty documents are skipped.
func Decode(r io.Reader) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objects, nil
			}
			return nil, fmt.Errorf("decoding document %d: %w", len(objects)+1, err)
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}
