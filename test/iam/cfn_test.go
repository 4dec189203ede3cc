package iam

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// cfnNames are the template's parameters and pseudo parameters with the placeholders of
// the JSON files that stand for the same values.
var cfnNames = map[string]string{
	"AWS::Partition":       "AWS_PARTITION",
	"AWS::Region":          "AWS_REGION",
	"AWS::AccountId":       "AWS_ACCOUNT_ID",
	"ClusterName":          "CLUSTER_NAME",
	"NodeRoleName":         "NODE_ROLE_NAME",
	"KmsKeyArn":            "KMS_KEY_ARN",
	"InterruptionQueueArn": "INTERRUPTION_QUEUE_ARN",
}

// cfnTemplate is the template decoded with its short-form intrinsic functions kept:
// !Sub's string stays a string (its ${} references as they are), !Ref X becomes "${X}",
// and any other (!Equals, !Not, !GetAtt) becomes {"Fn::Name": argument}. refs are the
// names !Sub and !Ref refer to; conditions are those resources, outputs and !If use.
type cfnTemplate struct {
	doc        map[string]any
	refs       []string
	conditions []string
}

func decodeTemplate(t *testing.T) cfnTemplate {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(readFile(t, cfnTemplateFile)), &root); err != nil {
		t.Fatalf("%s: %v", cfnTemplateFile, err)
	}
	var tmpl cfnTemplate
	doc, ok := tmpl.convert(t, &root).(map[string]any)
	if !ok {
		t.Fatalf("%s is not a mapping", cfnTemplateFile)
	}
	tmpl.doc = doc
	return tmpl
}

func (c *cfnTemplate) convert(t *testing.T, n *yaml.Node) any {
	t.Helper()
	switch n.Kind {
	case yaml.DocumentNode:
		return c.convert(t, n.Content[0])
	case yaml.AliasNode:
		return c.convert(t, n.Alias)
	}
	switch n.Tag {
	case "!Sub":
		if n.Kind != yaml.ScalarNode {
			t.Fatalf("line %d: !Sub with a variable map; this test reads the string form only", n.Line)
		}
		for _, m := range placeholder.FindAllStringSubmatch(n.Value, -1) {
			c.refs = append(c.refs, m[1])
		}
		return n.Value
	case "!Ref":
		c.refs = append(c.refs, n.Value)
		return "${" + n.Value + "}"
	case "!If":
		if len(n.Content) > 0 {
			c.conditions = append(c.conditions, n.Content[0].Value)
		}
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		plain := *n
		plain.Tag = ""
		return map[string]any{"Fn::" + n.Tag[1:]: c.convert(t, &plain)}
	}
	switch n.Kind {
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if key == "Condition" && n.Content[i+1].Kind == yaml.ScalarNode {
				c.conditions = append(c.conditions, n.Content[i+1].Value)
			}
			out[key] = c.convert(t, n.Content[i+1])
		}
		return out
	case yaml.SequenceNode:
		out := []any{}
		for _, e := range n.Content {
			out = append(out, c.convert(t, e))
		}
		return out
	}
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatalf("line %d: %v", n.Line, err)
	}
	return v
}

func section(t *testing.T, tmpl cfnTemplate, name string) map[string]any {
	t.Helper()
	s, ok := tmpl.doc[name].(map[string]any)
	if !ok {
		t.Fatalf("%s has no %s", cfnTemplateFile, name)
	}
	return s
}

// cfnPolicy is the policy document of the template's managed policy resource, its
// references written as the JSON files' placeholders and filled with testValues.
func cfnPolicy(t *testing.T, resource string) policyDocument {
	t.Helper()
	tmpl := decodeTemplate(t)
	r, ok := section(t, tmpl, "Resources")[resource].(map[string]any)
	if !ok || r["Type"] != "AWS::IAM::ManagedPolicy" {
		t.Fatalf("%s: %s is not an AWS::IAM::ManagedPolicy", cfnTemplateFile, resource)
	}
	props, _ := r["Properties"].(map[string]any)
	data, err := json.Marshal(props["PolicyDocument"])
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for cfn, placeholderName := range cfnNames {
		text = strings.ReplaceAll(text, "${"+cfn+"}", "${"+placeholderName+"}")
	}
	return parsePolicy(t, fill(t, text, testValues))
}

// normalized writes every Action and Resource as a list, as IAM reads a string.
func normalized(doc policyDocument) policyDocument {
	for _, s := range doc.Statement {
		for _, key := range []string{"Action", "Resource"} {
			if list, ok := stringsOf(s[key]); ok {
				s[key] = list
			}
		}
	}
	return doc
}

func TestCloudFormationTemplateParses(t *testing.T) {
	tmpl := decodeTemplate(t)
	if tmpl.doc["AWSTemplateFormatVersion"] != "2010-09-09" {
		t.Errorf("AWSTemplateFormatVersion %v", tmpl.doc["AWSTemplateFormatVersion"])
	}
	params := section(t, tmpl, "Parameters")
	resources := section(t, tmpl, "Resources")
	conditions := section(t, tmpl, "Conditions")
	for _, ref := range tmpl.refs {
		name, _, _ := strings.Cut(ref, ".") // Resource.Attribute
		_, isParam := params[name]
		_, isResource := resources[name]
		if !isParam && !isResource && !strings.HasPrefix(name, "AWS::") {
			t.Errorf("the template refers to %q, which is no parameter, resource or pseudo parameter", ref)
		}
	}
	for _, c := range tmpl.conditions {
		if _, ok := conditions[c]; !ok {
			t.Errorf("the template uses condition %q, which Conditions does not define", c)
		}
	}
	for name := range params {
		if name != "CreateNodeRole" && !slices.Contains(tmpl.refs, name) {
			t.Errorf("parameter %s is never used", name)
		}
	}
	checkShape(t, cfnTemplateFile+" ControllerPolicy", cfnPolicy(t, "ControllerPolicy"))
	checkShape(t, cfnTemplateFile+" EncryptedVolumesPolicy", cfnPolicy(t, "EncryptedVolumesPolicy"))
	checkShape(t, cfnTemplateFile+" InterruptionQueuePolicy", cfnPolicy(t, "InterruptionQueuePolicy"))
}

// The template's policies are the JSON files' statements, so that either way of
// installing grants the same.
func TestCloudFormationPoliciesAreTheJSONFiles(t *testing.T) {
	for resource, rel := range map[string]string{"ControllerPolicy": controllerPolicyFile, "EncryptedVolumesPolicy": kmsPolicyFile, "InterruptionQueuePolicy": interruptionPolicyFile} {
		if diff := cmp.Diff(normalized(filledPolicy(t, rel)), normalized(cfnPolicy(t, resource))); diff != "" {
			t.Errorf("%s's %s differs from %s (-json +cfn):\n%s", cfnTemplateFile, resource, rel, diff)
		}
	}
}
