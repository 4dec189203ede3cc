package migrate

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteYAML writes the converted objects as one YAML stream, node classes first so that
// an apply creates them before the pools that refer to them.
func (r *Result) WriteYAML(w io.Writer) error {
	var objects []any
	for i := range r.EC2NodeClasses {
		objects = append(objects, &r.EC2NodeClasses[i])
	}
	for i := range r.NodePools {
		objects = append(objects, &r.NodePools[i])
	}
	for i, o := range objects {
		data, err := ManifestYAML(o)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}

// ManifestYAML writes an object as a user would: without its empty status, its null
// creation time, or the empty structures Go's encoding leaves for unset fields.
func ManifestYAML(obj any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	pruned, _ := prune(m).(map[string]any)
	if pruned == nil {
		return nil, fmt.Errorf("nothing to write")
	}
	return yaml.Marshal(pruned)
}

// prune removes nulls and empty maps, and a standby of no nodes, which is the default.
func prune(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			p := prune(child)
			if p == nil {
				delete(v, k)
				continue
			}
			v[k] = p
		}
		if standby, ok := v["standby"].(map[string]any); ok && len(standby) == 1 && standby["min"] == float64(0) {
			delete(v, "standby")
		}
		if len(v) == 0 {
			return nil
		}
		return v
	case []any:
		for i := range v {
			if p := prune(v[i]); p != nil {
				v[i] = p
			}
		}
		return v
	default:
		return v
	}
}
