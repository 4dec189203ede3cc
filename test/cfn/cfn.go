// Package cfn decodes a CloudFormation template written in YAML, short-form intrinsic
// functions (!Ref, !Sub, !GetAtt, !If, ...) included, for the tests that check the
// templates of deploy/ (test/iam, test/interruptionsetup). A plain YAML decoder refuses
// or drops the tags, and each test writing its own converter had them drift apart.
//
// The short forms are written in their long form, the JSON CloudFormation itself
// accepts, so that a test compares against what the template means whichever way it is
// spelled: !Ref X is {"Ref": X}, !Condition X is {"Condition": X} and any other !Name v
// is {"Fn::Name": v}.
package cfn

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Template is a decoded template.
type Template struct {
	// Doc is the whole template, the short forms written in their long form.
	Doc map[string]any
	// Refs are the names the template refers to, in the order met, repeated: !Ref's
	// name, !GetAtt's Resource.Attribute and the ${X} of !Sub's string. A test checks
	// each is a parameter, a resource or a pseudo parameter, and that every parameter
	// is used.
	Refs []string
	// Conditions are the conditions the template uses: the values of Condition keys
	// (of resources and outputs), !If's first argument and !Condition's name.
	Conditions []string
}

// shortForms are CloudFormation's short-form tags. Another tag is a mistake (or a
// function the tests do not know), so it is an error rather than a value passed on.
var shortForms = map[string]bool{
	"!Ref": true, "!Sub": true, "!GetAtt": true, "!Condition": true,
	"!If": true, "!Equals": true, "!Not": true, "!And": true, "!Or": true,
	"!Base64": true, "!Cidr": true, "!FindInMap": true, "!GetAZs": true, "!ImportValue": true,
	"!Join": true, "!Select": true, "!Split": true, "!Transform": true,
}

// subRef is a ${X} of !Sub's string; ${!X} is a literal and does not match.
var subRef = regexp.MustCompile(`\$\{([A-Za-z0-9_:.]+)\}`)

// Decode decodes a template. An unknown tag, or !Sub with a variable map (whose
// names the refs could not tell from the template's), is an error naming its line.
func Decode(data []byte) (*Template, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	t := &Template{}
	v, err := t.convert(&root)
	if err != nil {
		return nil, err
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the template is not a mapping")
	}
	t.Doc = doc
	return t, nil
}

func (t *Template) convert(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return t.convert(n.Content[0])
	case yaml.AliasNode:
		return t.convert(n.Alias)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return t.shortForm(n)
	}
	switch n.Kind {
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i].Value, n.Content[i+1]
			// A resource's or output's Condition names one of Conditions; an IAM
			// policy's Condition is a mapping and is not one.
			if key == "Condition" && value.Kind == yaml.ScalarNode {
				t.Conditions = append(t.Conditions, value.Value)
			}
			v, err := t.convert(value)
			if err != nil {
				return nil, err
			}
			out[key] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := []any{}
		for _, e := range n.Content {
			v, err := t.convert(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	return v, nil
}

// shortForm writes a tagged node in its long form, noting the names and conditions it
// uses.
func (t *Template) shortForm(n *yaml.Node) (any, error) {
	if !shortForms[n.Tag] {
		return nil, fmt.Errorf("line %d: %s is no CloudFormation function", n.Line, n.Tag)
	}
	switch n.Tag {
	case "!Ref", "!Condition":
		if n.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: %s takes a name", n.Line, n.Tag)
		}
		if n.Tag == "!Ref" {
			t.Refs = append(t.Refs, n.Value)
		} else {
			t.Conditions = append(t.Conditions, n.Value)
		}
		return map[string]any{n.Tag[1:]: n.Value}, nil
	case "!Sub":
		if n.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: !Sub with a variable map; only the string form is read", n.Line)
		}
		for _, m := range subRef.FindAllStringSubmatch(n.Value, -1) {
			t.Refs = append(t.Refs, m[1])
		}
		return map[string]any{"Fn::Sub": n.Value}, nil
	case "!GetAtt":
		switch {
		case n.Kind == yaml.ScalarNode:
			t.Refs = append(t.Refs, n.Value) // Resource.Attribute
		case n.Kind == yaml.SequenceNode && len(n.Content) == 2:
			t.Refs = append(t.Refs, n.Content[0].Value+"."+n.Content[1].Value)
		default:
			return nil, fmt.Errorf("line %d: !GetAtt takes Resource.Attribute or [Resource, Attribute]", n.Line)
		}
	case "!If":
		if n.Kind != yaml.SequenceNode || len(n.Content) != 3 {
			return nil, fmt.Errorf("line %d: !If takes [condition, then, else]", n.Line)
		}
		t.Conditions = append(t.Conditions, n.Content[0].Value)
	}
	// The argument is the node without its tag, decoded as any other.
	plain := *n
	plain.Tag = ""
	v, err := t.convert(&plain)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Fn::" + n.Tag[1:]: v}, nil
}

// Section is the template's top-level mapping name (Parameters, Resources, ...).
func (t *Template) Section(name string) (map[string]any, error) {
	s, ok := t.Doc[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the template has no %s", name)
	}
	return s, nil
}

// Resources are the Properties of the template's resources of type typ, by logical
// name (an empty map if there is none).
func (t *Template) Resources(typ string) (map[string]map[string]any, error) {
	resources, err := t.Section("Resources")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for name, r := range resources {
		r, _ := r.(map[string]any)
		if r["Type"] == typ {
			props, _ := r["Properties"].(map[string]any)
			out[name] = props
		}
	}
	return out, nil
}
