package cfn

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, yaml  string
		doc         map[string]any
		refs, conds []string
		err         string // part of the error, if one
	}{{
		name: "ref",
		yaml: "Value: !Ref Queue",
		doc:  map[string]any{"Value": map[string]any{"Ref": "Queue"}},
		refs: []string{"Queue"},
	}, {
		name: "sub",
		yaml: "Value: !Sub arn:${AWS::Partition}:sqs:${AWS::Region}:${!Literal}:${Queue.QueueName}",
		doc:  map[string]any{"Value": map[string]any{"Fn::Sub": "arn:${AWS::Partition}:sqs:${AWS::Region}:${!Literal}:${Queue.QueueName}"}},
		refs: []string{"AWS::Partition", "AWS::Region", "Queue.QueueName"},
	}, {
		name: "getatt, both forms",
		yaml: "A: !GetAtt Queue.Arn\nB: !GetAtt [Role, Arn]",
		doc: map[string]any{
			"A": map[string]any{"Fn::GetAtt": "Queue.Arn"},
			"B": map[string]any{"Fn::GetAtt": []any{"Role", "Arn"}},
		},
		refs: []string{"Queue.Arn", "Role.Arn"},
	}, {
		name: "conditions",
		yaml: `Conditions:
  Create: !Not [!Equals [!Ref Name, ""]]
Resources:
  Role:
    Condition: Create
    Properties:
      Name: !If [Create, !Ref Name, !Ref AWS::NoValue]
      Policy: {Condition: {StringEquals: {a: b}}}
`,
		doc: map[string]any{
			"Conditions": map[string]any{"Create": map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "Name"}, ""}}}}},
			"Resources": map[string]any{"Role": map[string]any{
				"Condition": "Create",
				"Properties": map[string]any{
					"Name":   map[string]any{"Fn::If": []any{"Create", map[string]any{"Ref": "Name"}, map[string]any{"Ref": "AWS::NoValue"}}},
					"Policy": map[string]any{"Condition": map[string]any{"StringEquals": map[string]any{"a": "b"}}},
				},
			}},
		},
		refs:  []string{"Name", "Name", "AWS::NoValue"},
		conds: []string{"Create", "Create"},
	}, {
		name: "plain values keep their types",
		yaml: "N: 300\nB: true\nS: '300'\nL: [a, 1]",
		doc:  map[string]any{"N": 300, "B": true, "S": "300", "L": []any{"a", 1}},
	}, {
		name: "unknown tag",
		yaml: "A: 1\nB: !Reference Queue",
		err:  "line 2: !Reference is no CloudFormation function",
	}, {
		name: "sub with a variable map",
		yaml: "A: !Sub [\"${X}\", {X: !Ref Y}]",
		err:  "line 1: !Sub with a variable map",
	}, {
		name: "not a mapping",
		yaml: "- a",
		err:  "not a mapping",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.doc, got.Doc); diff != "" {
				t.Errorf("Doc (-want +got):\n%s", diff)
			}
			if !cmp.Equal(tc.refs, got.Refs, cmpopts.EquateEmpty()) {
				t.Errorf("Refs %q, want %q", got.Refs, tc.refs)
			}
			if !cmp.Equal(tc.conds, got.Conditions, cmpopts.EquateEmpty()) {
				t.Errorf("Conditions %q, want %q", got.Conditions, tc.conds)
			}
		})
	}
}

func TestSectionAndResources(t *testing.T) {
	tmpl, err := Decode([]byte(`Resources:
  Queue: {Type: AWS::SQS::Queue, Properties: {MessageRetentionPeriod: 300}}
  Rule: {Type: AWS::Events::Rule, Properties: {State: ENABLED}}
`))
	if err != nil {
		t.Fatal(err)
	}
	queues, err := tmpl.Resources("AWS::SQS::Queue")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]map[string]any{"Queue": {"MessageRetentionPeriod": 300}}; !cmp.Equal(want, queues) {
		t.Errorf("Resources: %v, want %v", queues, want)
	}
	if _, err := tmpl.Section("Outputs"); err == nil {
		t.Error("Section(Outputs) of a template without outputs: no error")
	}
}
