// Package interruptionsetup checks the set-up of the interruption queue in
// deploy/interruption: the CloudFormation template parses, makes the queue as documented
// and names the four EventBridge rules with the event patterns of patterns/, which the
// Terraform module and the by-hand commands of docs/interruptions.md use too. That the
// patterns route EC2's events to the queue is shown against moto in
// internal/cloudprovider/aws (interruptionqueue_test.go).
package interruptionsetup

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stratos-sh/stratos/test/cfn"
	"github.com/stratos-sh/stratos/test/harness"
)

const (
	templateFile  = "deploy/interruption/interruption-queue.cfn.yaml"
	terraformFile = "deploy/interruption/main.tf"
	patternsDir   = "deploy/interruption/patterns"
	guideFile     = "docs/interruptions.md"
)

// wantPatterns are the event patterns of the four kinds of notice, written here from
// AWS's documentation of the events (EC2's spot, rebalance and state-change events and
// AWS Health's scheduled changes), not read from the files they check.
var wantPatterns = map[string]map[string]any{
	"spot-interruption": {
		"source": []any{"aws.ec2"}, "detail-type": []any{"EC2 Spot Instance Interruption Warning"},
	},
	"rebalance-recommendation": {
		"source": []any{"aws.ec2"}, "detail-type": []any{"EC2 Instance Rebalance Recommendation"},
	},
	"instance-state-change": {
		"source": []any{"aws.ec2"}, "detail-type": []any{"EC2 Instance State-change Notification"},
	},
	"scheduled-change": {
		"source": []any{"aws.health"}, "detail-type": []any{"AWS Health Event"},
		"detail": map[string]any{"service": []any{"EC2"}, "eventTypeCategory": []any{"scheduledChange"}},
	},
}

func read(t *testing.T, rel string) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// patternFiles are the files of patterns/ by name without .json, decoded.
func patternFiles(t *testing.T) map[string]map[string]any {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, patternsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, f := range files {
		var p map[string]any
		if err := json.Unmarshal([]byte(read(t, filepath.Join(patternsDir, filepath.Base(f)))), &p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = p
	}
	return out
}

func TestPatternFilesAreTheFourKindsOfNotice(t *testing.T) {
	got := patternFiles(t)
	if diff := cmp.Diff(wantPatterns, got); diff != "" {
		t.Errorf("%s differs from the documented patterns (-want +got):\n%s", patternsDir, diff)
	}
}

// decodeTemplate is the CloudFormation template, decoded by test/cfn: its short-form
// functions are written {"Fn::Name": argument} ({"Ref": name} for !Ref).
func decodeTemplate(t *testing.T) *cfn.Template {
	t.Helper()
	tmpl, err := cfn.Decode([]byte(read(t, templateFile)))
	if err != nil {
		t.Fatalf("%s: %v", templateFile, err)
	}
	return tmpl
}

func section(t *testing.T, tmpl *cfn.Template, name string) map[string]any {
	t.Helper()
	s, err := tmpl.Section(name)
	if err != nil {
		t.Fatalf("%s: %v", templateFile, err)
	}
	return s
}

// resourcesOfType are the template's resources of a type, their Properties by logical name.
func resourcesOfType(t *testing.T, tmpl *cfn.Template, typ string) map[string]map[string]any {
	t.Helper()
	out, err := tmpl.Resources(typ)
	if err != nil {
		t.Fatalf("%s: %v", templateFile, err)
	}
	return out
}

func TestTemplateParsesAndRefersToWhatItDefines(t *testing.T) {
	tmpl := decodeTemplate(t)
	if tmpl.Doc["AWSTemplateFormatVersion"] != "2010-09-09" {
		t.Errorf("AWSTemplateFormatVersion %v", tmpl.Doc["AWSTemplateFormatVersion"])
	}
	params, resources := section(t, tmpl, "Parameters"), section(t, tmpl, "Resources")
	for _, ref := range tmpl.Refs {
		name, _, _ := strings.Cut(ref, ".") // Resource.Attribute
		_, isParam := params[name]
		_, isResource := resources[name]
		if !isParam && !isResource && !strings.HasPrefix(name, "AWS::") {
			t.Errorf("the template refers to %q, which is no parameter, resource or pseudo parameter", ref)
		}
	}
	for name := range params {
		if !slices.Contains(tmpl.Refs, name) {
			t.Errorf("parameter %s is never used", name)
		}
	}
	outputs := section(t, tmpl, "Outputs")
	for name, want := range map[string]any{
		"QueueName": map[string]any{"Fn::GetAtt": "Queue.QueueName"},
		"QueueArn":  map[string]any{"Fn::GetAtt": "Queue.Arn"},
		"QueueUrl":  map[string]any{"Ref": "Queue"}, // an SQS queue's Ref is its URL
	} {
		out, _ := outputs[name].(map[string]any)
		if !cmp.Equal(out["Value"], want) {
			t.Errorf("output %s is %v, want %v", name, out["Value"], want)
		}
	}
}

// The queue is encrypted, keeps a message 300 seconds, and lets EventBridge (and SQS)
// send to it, and nothing else.
func TestTemplateQueueAndItsPolicy(t *testing.T) {
	tmpl := decodeTemplate(t)
	queues := resourcesOfType(t, tmpl, "AWS::SQS::Queue")
	queue, ok := queues["Queue"]
	if len(queues) != 1 || !ok {
		t.Fatalf("want one AWS::SQS::Queue named Queue, found %v", slices.Collect(maps.Keys(queues)))
	}
	if queue["SqsManagedSseEnabled"] != true || queue["MessageRetentionPeriod"] != 300 {
		t.Errorf("the queue has SqsManagedSseEnabled %v and MessageRetentionPeriod %v; want true and 300", queue["SqsManagedSseEnabled"], queue["MessageRetentionPeriod"])
	}
	policies := resourcesOfType(t, tmpl, "AWS::SQS::QueuePolicy")
	if len(policies) != 1 {
		t.Fatalf("want one AWS::SQS::QueuePolicy, found %d", len(policies))
	}
	for _, p := range policies {
		if !cmp.Equal(p["Queues"], []any{map[string]any{"Ref": "Queue"}}) {
			t.Errorf("the queue policy is for %v, want the Queue", p["Queues"])
		}
		doc, _ := p["PolicyDocument"].(map[string]any)
		statements, _ := doc["Statement"].([]any)
		var allows []map[string]any
		for _, s := range statements {
			s, _ := s.(map[string]any)
			if s["Effect"] == "Allow" {
				allows = append(allows, s)
			}
		}
		if len(allows) != 1 {
			t.Fatalf("the queue policy has %d Allow statements, want one", len(allows))
		}
		allow := allows[0]
		principal, _ := allow["Principal"].(map[string]any)
		if !cmp.Equal(principal["Service"], []any{"events.amazonaws.com", "sqs.amazonaws.com"}) ||
			allow["Action"] != "sqs:SendMessage" || !cmp.Equal(allow["Resource"], map[string]any{"Fn::GetAtt": "Queue.Arn"}) {
			t.Errorf("the queue policy allows %v; want sqs:SendMessage on the queue to events.amazonaws.com and sqs.amazonaws.com", allow)
		}
	}
}

// The template's rules are the four of patterns/, each sending to the queue.
func TestTemplateNamesTheFourRules(t *testing.T) {
	tmpl := decodeTemplate(t)
	rules := resourcesOfType(t, tmpl, "AWS::Events::Rule")
	var got []map[string]any
	for name, r := range rules {
		got = append(got, r["EventPattern"].(map[string]any))
		targets, _ := r["Targets"].([]any)
		if len(targets) != 1 {
			t.Errorf("rule %s has %d targets, want the queue alone", name, len(targets))
			continue
		}
		target, _ := targets[0].(map[string]any)
		if !cmp.Equal(target["Arn"], map[string]any{"Fn::GetAtt": "Queue.Arn"}) {
			t.Errorf("rule %s targets %v, want the queue", name, target["Arn"])
		}
	}
	want := slices.Collect(maps.Values(patternFiles(t)))
	sortPatterns := cmp.Transformer("sort", func(in []map[string]any) []string {
		var out []string
		for _, p := range in {
			b, _ := json.Marshal(p)
			out = append(out, string(b))
		}
		slices.Sort(out)
		return out
	})
	if len(rules) != 4 {
		t.Errorf("the template has %d rules, want 4", len(rules))
	}
	if diff := cmp.Diff(want, got, sortPatterns); diff != "" {
		t.Errorf("the template's event patterns differ from %s (-files +template):\n%s", patternsDir, diff)
	}
}

// The Terraform module reads every pattern file and makes the queue the template
// makes. HCL is not parsed here (no HCL library in the module): the checks are on its
// text, which is enough to notice a file or a setting forgotten.
func TestTerraformModuleUsesThePatternFiles(t *testing.T) {
	tf := read(t, terraformFile)
	for name := range patternFiles(t) {
		if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `\s*=\s*"` + regexp.QuoteMeta(name) + `\.json"`).MatchString(tf) {
			t.Errorf("%s has no rule for %s.json", terraformFile, name)
		}
	}
	for _, want := range []string{
		`event_pattern = file("${path.module}/patterns/${each.value}")`,
		"message_retention_seconds = 300",
		"sqs_managed_sse_enabled   = true",
		`identifiers = ["events.amazonaws.com", "sqs.amazonaws.com"]`,
		`actions   = ["sqs:SendMessage"]`,
		`arn       = aws_sqs_queue.interruption.arn`,
	} {
		if !strings.Contains(tf, want) {
			t.Errorf("%s does not say %s", terraformFile, want)
		}
	}
	for _, output := range []string{"queue_name", "queue_arn", "queue_url"} {
		if !strings.Contains(tf, `output "`+output+`"`) {
			t.Errorf("%s has no output %s", terraformFile, output)
		}
	}
}

// The guide's by-hand commands create a rule from each pattern file, in a loop over
// their names.
func TestGuideCreatesARuleFromEachPatternFile(t *testing.T) {
	guide := read(t, guideFile)
	loop := regexp.MustCompile(`for kind in ([a-z -]+); do`).FindStringSubmatch(guide)
	if loop == nil || !strings.Contains(guide, "file://"+patternsDir+"/$kind.json") {
		t.Fatalf("%s has no loop creating a rule from each file://%s/$kind.json", guideFile, patternsDir)
	}
	named := strings.Fields(loop[1])
	slices.Sort(named)
	if files := slices.Sorted(maps.Keys(patternFiles(t))); !slices.Equal(named, files) {
		t.Errorf("%s creates rules for %v; the pattern files are %v", guideFile, named, files)
	}
	for _, rel := range []string{templateFile, terraformFile} {
		if !strings.Contains(guide, "../"+rel) {
			t.Errorf("%s does not link %s", guideFile, rel)
		}
	}
}
