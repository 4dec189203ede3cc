package iam

import (
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Policy files, relative to the repository.
const (
	controllerPolicyFile = "deploy/iam/controller-policy.json"
	kmsPolicyFile        = "deploy/iam/controller-policy-kms.json"
	// interruptionPolicyFile grants the reads of the interruption queue, which only an
	// operator given --interruption-queue makes.
	interruptionPolicyFile = "deploy/iam/controller-policy-interruption.json"
	cfnTemplateFile        = "deploy/iam/controller-policy.cfn.yaml"
)

// policyDocument is an IAM policy document, its statements kept generic so that what
// the files hold, and nothing a Go type would drop, is checked.
type policyDocument struct {
	Version   string           `json:"Version"`
	Statement []map[string]any `json:"Statement"`
}

// testValues fill the placeholders as the documented command would for a test account.
var testValues = map[string]string{
	"AWS_PARTITION":  "aws",
	"AWS_REGION":     "eu-west-1",
	"AWS_ACCOUNT_ID": "111122223333",
	"CLUSTER_NAME":   "prod",
	"NODE_ROLE_NAME": "StratosNodeRole-prod",
	"KMS_KEY_ARN":    "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
	// The queue deploy/interruption makes, named as its docs suggest.
	"INTERRUPTION_QUEUE_ARN": "arn:aws:sqs:eu-west-1:111122223333:stratos-prod",
}

// policyFiles are the JSON policy files a controller's role may be given.
var policyFiles = []string{controllerPolicyFile, kmsPolicyFile, interruptionPolicyFile}

// placeholder is a ${NAME} the fill command replaces.
var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_:.]+)\}`)

func readFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fill replaces the placeholders of text with values, failing on one values lacks.
func fill(t *testing.T, text string, values map[string]string) string {
	t.Helper()
	return os.Expand(text, func(name string) string {
		v, ok := values[name]
		if !ok {
			t.Fatalf("placeholder ${%s} has no value; the fill command must name it", name)
		}
		return v
	})
}

// parsePolicy decodes a policy document strictly: an unknown top-level key fails.
func parsePolicy(t *testing.T, text string) policyDocument {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var doc policyDocument
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not a policy document: %v", err)
	}
	return doc
}

// stringsOf is an Action or Resource value as a list: IAM takes a string or a list.
func stringsOf(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case []any:
		var out []string
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, len(out) > 0
	}
	return nil, false
}

// statementKeys are the keys an identity-based policy statement may hold.
var statementKeys = []string{"Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition"}

// checkShape holds doc to IAM's grammar for identity policies: version 2012-10-17, a
// non-empty statement list, each with a unique Sid, an Effect of Allow or Deny, a
// non-empty Action and Resource of strings, actions as service:Name, resources as * or
// ARNs of the filled partition.
func checkShape(t *testing.T, name string, doc policyDocument) {
	t.Helper()
	if doc.Version != "2012-10-17" {
		t.Errorf("%s: Version %q, want 2012-10-17", name, doc.Version)
	}
	if len(doc.Statement) == 0 {
		t.Fatalf("%s: no statements", name)
	}
	sids := map[string]bool{}
	action := regexp.MustCompile(`^[a-z0-9-]+:[A-Za-z0-9*?]+$`)
	for i, s := range doc.Statement {
		for key := range s {
			if !slices.Contains(statementKeys, key) {
				t.Errorf("%s: statement %d has key %q, which IAM does not take", name, i, key)
			}
		}
		sid, _ := s["Sid"].(string)
		if sid == "" || sids[sid] {
			t.Errorf("%s: statement %d has Sid %q, want a unique one", name, i, sid)
		}
		sids[sid] = true
		if e := s["Effect"]; e != "Allow" && e != "Deny" {
			t.Errorf("%s: %s: Effect %v", name, sid, e)
		}
		actions, ok := stringsOf(s["Action"])
		if !ok {
			t.Errorf("%s: %s: Action %v is not a string or a list of strings", name, sid, s["Action"])
		}
		for _, a := range actions {
			if !action.MatchString(a) {
				t.Errorf("%s: %s: action %q is not service:Operation", name, sid, a)
			}
		}
		resources, ok := stringsOf(s["Resource"])
		if !ok {
			t.Errorf("%s: %s: Resource %v is not a string or a list of strings", name, sid, s["Resource"])
		}
		for _, r := range resources {
			if r != "*" && !strings.HasPrefix(r, "arn:"+testValues["AWS_PARTITION"]+":") {
				t.Errorf("%s: %s: resource %q is neither * nor an ARN", name, sid, r)
			}
		}
		if c, ok := s["Condition"]; ok {
			if _, ok := c.(map[string]any); !ok {
				t.Errorf("%s: %s: Condition %v is not an object", name, sid, c)
			}
		}
	}
}

// notAllowed are the actions no Allow statement of doc names (IAM wildcards honoured,
// case-insensitively, as IAM matches actions).
func notAllowed(doc policyDocument, actions []string) []string {
	var missing []string
	for _, want := range actions {
		allowed := false
		for _, s := range doc.Statement {
			if s["Effect"] != "Allow" {
				continue
			}
			patterns, _ := stringsOf(s["Action"])
			for _, p := range patterns {
				if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(want)); ok {
					allowed = true
				}
			}
		}
		if !allowed {
			missing = append(missing, want)
		}
	}
	return missing
}

// withoutAction is a copy of doc with action taken out of every statement.
func withoutAction(t *testing.T, doc policyDocument, action string) policyDocument {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out policyDocument
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range out.Statement {
		actions, _ := stringsOf(s["Action"])
		kept := slices.DeleteFunc(actions, func(a string) bool { return a == action })
		list := make([]any, len(kept))
		for i, a := range kept {
			list[i] = a
		}
		s["Action"] = list
	}
	return out
}

// filledPolicy is a policy file filled with testValues and parsed.
func filledPolicy(t *testing.T, rel string) policyDocument {
	t.Helper()
	return parsePolicy(t, fill(t, readFile(t, rel), testValues))
}

func TestPolicyFilesParseAsIAMPolicyDocuments(t *testing.T) {
	for _, rel := range policyFiles {
		raw := readFile(t, rel)
		if !json.Valid([]byte(raw)) {
			t.Errorf("%s is not JSON before it is filled", rel)
		}
		checkShape(t, rel, filledPolicy(t, rel))
	}
}

// joined is one document holding the statements of docs, as a role given them all has.
func joined(docs ...policyDocument) policyDocument {
	out := policyDocument{Version: docs[0].Version}
	for _, d := range docs {
		out.Statement = append(out.Statement, d.Statement...)
	}
	return out
}

// fullPolicy is what a role given the controller policy and the interruption queue's
// holds: an operator with --interruption-queue calls every operation the provider has.
func fullPolicy(t *testing.T) policyDocument {
	t.Helper()
	return joined(filledPolicy(t, controllerPolicyFile), filledPolicy(t, interruptionPolicyFile))
}

func TestPoliciesAllowEveryOperationTheProviderCalls(t *testing.T) {
	called, _ := calledOperations(t)
	for name, doc := range map[string]policyDocument{
		controllerPolicyFile + " + " + interruptionPolicyFile:            fullPolicy(t),
		cfnTemplateFile + " (ControllerPolicy, InterruptionQueuePolicy)": joined(cfnPolicy(t, "ControllerPolicy"), cfnPolicy(t, "InterruptionQueuePolicy")),
	} {
		if missing := notAllowed(doc, called); len(missing) > 0 {
			t.Errorf("%s allows none of %v, which the provider calls", name, missing)
		}
	}
}

// The queue's permissions are granted on the queue alone, in their own file that an
// operator without a queue needs not have, and are exactly the SQS operations the
// provider calls: the controller policy names no SQS action.
func TestQueuePermissionsAreOnTheQueueOnly(t *testing.T) {
	called, _ := calledOperations(t)
	var calledSQS []string
	for _, a := range called {
		if strings.HasPrefix(a, "sqs:") {
			calledSQS = append(calledSQS, a)
		}
	}
	if len(calledSQS) == 0 {
		t.Fatal("found no SQS operation the provider calls")
	}
	for _, s := range filledPolicy(t, controllerPolicyFile).Statement {
		actions, _ := stringsOf(s["Action"])
		for _, a := range actions {
			if strings.HasPrefix(strings.ToLower(a), "sqs:") {
				t.Errorf("%s: %v grants %s; the queue's permissions belong in %s", controllerPolicyFile, s["Sid"], a, interruptionPolicyFile)
			}
		}
	}
	var granted []string
	for _, s := range filledPolicy(t, interruptionPolicyFile).Statement {
		actions, _ := stringsOf(s["Action"])
		granted = append(granted, actions...)
		if resources, _ := stringsOf(s["Resource"]); !slices.Equal(resources, []string{testValues["INTERRUPTION_QUEUE_ARN"]}) {
			t.Errorf("%s: %v is granted on %v, want the queue %s only", interruptionPolicyFile, s["Sid"], resources, testValues["INTERRUPTION_QUEUE_ARN"])
		}
	}
	slices.Sort(granted)
	if !slices.Equal(granted, calledSQS) {
		t.Errorf("%s grants %v; the provider calls %v", interruptionPolicyFile, granted, calledSQS)
	}
}

// The check catches a policy that lacks any one of the called operations: each taken
// out of a copy of the file is reported, and only it.
func TestCoverageCheckCatchesAMissingAction(t *testing.T) {
	called, _ := calledOperations(t)
	doc := fullPolicy(t)
	for _, action := range called {
		if missing := notAllowed(withoutAction(t, doc, action), called); !slices.Equal(missing, []string{action}) {
			t.Errorf("with %s taken out, the check reported %v; want exactly it", action, missing)
		}
	}
}

// The fill commands the docs give name every placeholder of the files, and only those,
// so that what they write has none left.
func TestDocumentedFillCommandNamesEveryPlaceholder(t *testing.T) {
	inFiles := map[string]bool{}
	for _, rel := range policyFiles {
		for _, m := range placeholder.FindAllStringSubmatch(readFile(t, rel), -1) {
			inFiles[m[1]] = true
		}
	}
	command := regexp.MustCompile(`envsubst '([^']+)'`)
	for _, doc := range []string{"deploy/iam/README.md", "docs/install.md"} {
		named := map[string]bool{}
		for _, m := range command.FindAllStringSubmatch(readFile(t, doc), -1) {
			for _, p := range placeholder.FindAllStringSubmatch(m[1], -1) {
				named[p[1]] = true
			}
		}
		if !maps.Equal(named, inFiles) {
			t.Errorf("%s: the envsubst commands fill %v; the policy files hold %v", doc, slices.Sorted(maps.Keys(named)), slices.Sorted(maps.Keys(inFiles)))
		}
	}
}

// docs/aws.md points at the files instead of holding a copy of the policy that could
// fall behind them.
func TestAWSDocsPointAtThePolicyFiles(t *testing.T) {
	text := readFile(t, "docs/aws.md")
	for _, rel := range append(slices.Clone(policyFiles), cfnTemplateFile) {
		if !strings.Contains(text, "../"+rel) {
			t.Errorf("docs/aws.md does not link %s", rel)
		}
	}
	if strings.Contains(text, `"Sid": "CreateOwnedResources"`) {
		t.Error("docs/aws.md holds a copy of the controller policy; link deploy/iam/controller-policy.json instead")
	}
}
