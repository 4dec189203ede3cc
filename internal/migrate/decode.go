package migrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Object is one object of the input, as read: from a file or from the cluster.
type Object struct {
	// Source names where it came from: a file's path, "stdin" or "cluster".
	Source string
	// Raw is the object as JSON decodes it.
	Raw map[string]any
}

// APIVersion of the object, or "" when it has none.
func (o Object) APIVersion() string { s, _ := o.Raw["apiVersion"].(string); return s }

// Kind of the object, or "" when it has none.
func (o Object) Kind() string { s, _ := o.Raw["kind"].(string); return s }

// Name is metadata.name, with the namespace before it when there is one.
func (o Object) Name() string {
	meta, _ := o.Raw["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" {
		return ns + "/" + name
	}
	return name
}

// Decode reads every object of a stream of YAML (or JSON) documents separated by ---.
// Lists (kind: List, or a kubectl get -o yaml of several objects) are read as their
// items. Empty documents are skipped; a document that is not an object is an error that
// names the document, so that a user finds it.
func Decode(r io.Reader, source string) ([]Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var objects []Object
	for doc := 1; ; doc++ {
		data, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, doc, err)
		}
		if len(bytes.TrimSpace(stripComments(data))) == 0 {
			continue
		}
		jsonData, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, doc, err)
		}
		if string(bytes.TrimSpace(jsonData)) == "null" {
			continue
		}
		var raw map[string]any
		if err := json.Unmarshal(jsonData, &raw); err != nil {
			return nil, fmt.Errorf("%s: document %d is not an object: %w", source, doc, err)
		}
		objects = append(objects, expandList(Object{Source: source, Raw: raw})...)
	}
}

// expandList returns a list's items, or the object itself when it is not a list.
func expandList(o Object) []Object {
	items, isList := o.Raw["items"].([]any)
	if !isList || !strings.HasSuffix(o.Kind(), "List") {
		return []Object{o}
	}
	var out []Object
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			out = append(out, Object{Source: o.Source, Raw: m})
		}
	}
	return out
}

// stripComments drops the comment lines of a document, so that a document of comments
// only counts as empty.
func stripComments(data []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(data, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// decodeInto decodes a raw object into one of migrate's Karpenter types and lists the
// fields of its spec that the type does not have.
func decodeInto(raw map[string]any, into any) (unknown []string, err error) {
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return nil, err
	}
	back, err := json.Marshal(into)
	if err != nil {
		return nil, err
	}
	var known map[string]any
	if err := json.Unmarshal(back, &known); err != nil {
		return nil, err
	}
	unknownFields("spec", raw["spec"], known["spec"], &unknown)
	return unknown, nil
}

// unknownFields appends the paths of input that are not in known: the fields a decode
// into a type without them dropped.
func unknownFields(path string, input, known any, out *[]string) {
	switch in := input.(type) {
	case map[string]any:
		k, _ := known.(map[string]any)
		for _, key := range sortedKeys(in) {
			child, ok := k[key]
			if !ok {
				*out = append(*out, path+"."+key)
				continue
			}
			unknownFields(path+"."+key, in[key], child, out)
		}
	case []any:
		k, _ := known.([]any)
		for i, item := range in {
			if i < len(k) {
				unknownFields(fmt.Sprintf("%s[%d]", path, i), item, k[i], out)
			}
		}
	}
}
