package v1beta1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// schemaDurationPattern is the pattern the generated CRD applies to durations, so the
// tests hold the Go side to what the API server actually enforces.
func schemaDurationPattern(t testing.TB) *regexp.Regexp {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "stratos.sh_nodepools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	field := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["disruption"].Properties["consolidateAfter"]
	rule := field.XValidations[0].Rule
	m := regexp.MustCompile(`self\.matches\('([^']+)'\)`).FindStringSubmatch(rule)
	if m == nil {
		t.Fatalf("no pattern in the duration rule %q", rule)
	}
	return regexp.MustCompile(m[1])
}

func TestDurationJSON(t *testing.T) {
	for text, want := range map[string]time.Duration{`"30s"`: 30 * time.Second, `"1h30m"`: 90 * time.Minute, `"1.5h"`: 90 * time.Minute, `"0s"`: 0} {
		var d Duration
		if err := json.Unmarshal([]byte(text), &d); err != nil || d.Duration != want {
			t.Errorf("%s decodes to %v, %v; want %v", text, d.Duration, err, want)
		}
	}
	for _, bad := range []string{`"ten minutes"`, `30`, `"-"`} {
		var d Duration
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s decodes without error", bad)
		}
	}
	out, _ := json.Marshal(Duration{Duration: 90 * time.Second})
	if string(out) != `"1m30s"` {
		t.Errorf("90s encodes as %s", out)
	}
}

func TestExpiryDurationJSON(t *testing.T) {
	var never ExpiryDuration
	if err := json.Unmarshal([]byte(`"Never"`), &never); err != nil || never.Duration != nil {
		t.Fatalf("Never decodes to %v, %v", never.Duration, err)
	}
	if out, _ := json.Marshal(never); string(out) != `"Never"` {
		t.Fatalf("Never encodes as %s", out)
	}
	var month ExpiryDuration
	if err := json.Unmarshal([]byte(`"720h"`), &month); err != nil || *month.Duration != 720*time.Hour {
		t.Fatalf("720h decodes to %v, %v", month.Duration, err)
	}
}

// FuzzDurationRoundTrip: whatever duration Go can read, it writes back in a form the
// API server's schema accepts and reads back the same, so a controller that writes a
// duration never produces an object the API server rejects.
func FuzzDurationRoundTrip(f *testing.F) {
	pattern := schemaDurationPattern(f)
	for _, seed := range []string{"30s", "1h30m", "1.5h", "0s", "250ms", "3µs", "7ns", "2562047h"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		quoted, _ := json.Marshal(s)
		var d Duration
		if err := json.Unmarshal(quoted, &d); err != nil || d.Duration < 0 {
			return // the schema rejects negative durations and Go rejects the rest
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var written string
		_ = json.Unmarshal(out, &written)
		if !pattern.MatchString(written) {
			t.Fatalf("%q is written as %q, which the schema rejects", s, written)
		}
		var back Duration
		if err := json.Unmarshal(out, &back); err != nil || back.Duration != d.Duration {
			t.Fatalf("%q round-trips to %v, %v; want %v", s, back.Duration, err, d.Duration)
		}
	})
}
