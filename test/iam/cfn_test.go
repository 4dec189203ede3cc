package iam

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stratos-sh/stratos/test/cfn"
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

// decodeTemplate is the CloudFormation template, decoded by test/cfn.
func decodeTemplate(t *testing.T) *cfn.Template {
	t.Helper()
	tmpl, err := cfn.Decode([]byte(readFile(t, cfnTemplateFile)))
	if err != nil {
		t.Fatalf("%s: %v", cfnTemplateFile, err)
	}
	return tmpl
}

func section(t *testing.T, tmpl *cfn.Template, name string) map[string]any {
	t.Helper()
	s, err := tmpl.Section(name)
	if err != nil {
		t.Fatalf("%s: %v", cfnTemplateFile, err)
	}
	return s
}

// asPlaceholders writes {"Ref": X} as "${X}" and {"Fn::Sub": s} as s, the form of the
// JSON files, whose placeholders are ${} references too.
func asPlaceholders(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 1 {
			if name, ok := v["Ref"].(string); ok {
				return "${" + name + "}"
			}
			if s, ok := v["Fn::Sub"].(string); ok {
				return s
			}
		}
		out := map[string]any{}
		for k, e := range v {
			out[k] = asPlaceholders(e)
		}
		return out
	case []any:
		out := []any{}
		for _, e := range v {
			out = append(out, asPlaceholders(e))
		}
		return out
	}
	return v
}

// cfnPolicy is the policy document of the template's managed policy resource, its
// references written as the JSON files' placeholders and filled with testValues.
func cfnPolicy(t *testing.T, resource string) policyDocument {
	t.Helper()
	tmpl := decodeTemplate(t)
	policies, err := tmpl.Resources("AWS::IAM::ManagedPolicy")
	if err != nil {
		t.Fatalf("%s: %v", cfnTemplateFile, err)
	}
	props, ok := policies[resource]
	if !ok {
		t.Fatalf("%s: %s is not an AWS::IAM::ManagedPolicy", cfnTemplateFile, resource)
	}
	data, err := json.Marshal(asPlaceholders(props["PolicyDocument"]))
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
	if tmpl.Doc["AWSTemplateFormatVersion"] != "2010-09-09" {
		t.Errorf("AWSTemplateFormatVersion %v", tmpl.Doc["AWSTemplateFormatVersion"])
	}
	params := section(t, tmpl, "Parameters")
	resources := section(t, tmpl, "Resources")
	conditions := section(t, tmpl, "Conditions")
	for _, ref := range tmpl.Refs {
		name, _, _ := strings.Cut(ref, ".") // Resource.Attribute
		_, isParam := params[name]
		_, isResource := resources[name]
		if !isParam && !isResource && !strings.HasPrefix(name, "AWS::") {
			t.Errorf("the template refers to %q, which is no parameter, resource or pseudo parameter", ref)
		}
	}
	for _, c := range tmpl.Conditions {
		if _, ok := conditions[c]; !ok {
			t.Errorf("the template uses condition %q, which Conditions does not define", c)
		}
	}
	for name := range params {
		if name != "CreateNodeRole" && !slices.Contains(tmpl.Refs, name) {
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
