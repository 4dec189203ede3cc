package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundledScenariosLoad checks that every scenario in test/scenarios parses and
// validates, so that a typo in one fails here rather than in a long run.
func TestBundledScenariosLoad(t *testing.T) {
	files, err := filepath.Glob("../../../test/scenarios/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios found in test/scenarios")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name == "" || len(s.Steps) == 0 {
				t.Errorf("scenario %s has no name or no steps", file)
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	s, err := Parse([]byte("steps:\n- sleep: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.TimeScale != 1 || s.Seed != 1 {
		t.Errorf("defaults: timeScale %v seed %v, want 1 and 1", s.TimeScale, s.Seed)
	}
}

func TestParseRejects(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"no steps":            {"name: x\n", "at least one step"},
		"unknown field":       {"steps:\n- slep: 1s\n", `unknown field "slep"`},
		"two actions":         {"steps:\n- sleep: 1s\n  clearFaults: true\n", "exactly one action"},
		"no action":           {"steps:\n- description: nothing\n", "exactly one action"},
		"wait without bound":  {"steps:\n- wait: {podsRunning: {}, timeout: 1m}\n", "one of equals, atLeast or atMost"},
		"wait without cond":   {"steps:\n- wait: {timeout: 1m}\n", "no condition is set"},
		"wait without timout": {"steps:\n- wait: {podsRunning: {equals: 1}}\n", "timeout must be positive"},
		"bad phase":           {"steps:\n- expect: {claims: [{phase: Warm, equals: 1}]}\n", `phase "Warm" is not one of`},
		"bad cpu":             {"steps:\n- burst: {name: web, replicas: 1, cpu: lots, memory: 1Gi}\n", `cpu "lots"`},
		"bad spread":          {"steps:\n- burst: {name: web, replicas: 1, cpu: 1, memory: 1Gi, spread: [rack]}\n", `"rack" is not zone or hostname`},
		"bad name":            {"steps:\n- scale: {name: Web_1, replicas: 1}\n", `name "Web_1"`},
		"bad fault op":        {"steps:\n- faults: {errors: {Launch: {probability: 0.5}}}\n", `operation "Launch"`},
		"bad probability":     {"steps:\n- faults: {errors: {Start: {probability: 2}}}\n", "within [0, 1]"},
		"bad error code":      {"steps:\n- faults: {errors: {Start: {probability: 1, code: Boom}}}\n", `code "Boom"`},
		"bad rate limit":      {"steps:\n- faults: {rateLimits: {Start: {perSecond: 0, burst: 1}}}\n", "must be positive"},
		"bad time scale":      {"timeScale: -1\nsteps:\n- sleep: 1s\n", "timeScale must be positive"},
		"negative latency":    {"callLatency: -1s\nsteps:\n- sleep: 1s\n", "callLatency must not be negative"},
		"object without kind": {"objects:\n- metadata: {name: x}\nsteps:\n- sleep: 1s\n", "'Kind' is missing"},
		"object without name": {"objects:\n- {apiVersion: v1, kind: Namespace}\nsteps:\n- sleep: 1s\n", "metadata.name are required"},
		"kill without window": {"steps:\n- killOperator: {}\n", "within must be positive"},
		"bad percentile":      {"steps:\n- expect: {workloadLatency: [{name: peak, percentile: 95, atMost: 5}]}\n", "percentile 95 is not one of [50 90 99 100]"},
		"latency of no one":   {"steps:\n- expect: {workloadLatency: [{percentile: 90, atMost: 5}]}\n", `p90 latency of : name ""`},
		"hours of no pool":    {"steps:\n- expect: {standbyNodeHours: [{atMost: 5}]}\n", "standby node-hours of pool : pool is required"},
		"target of no pool":   {"steps:\n- expect: {standbyTarget: [{equals: 0}]}\n", "standby target of pool : pool is required"},
		"step index in error": {"steps:\n- sleep: 1s\n- sleep: 1s\n  clearFaults: true\n", "steps[1]"},
		// NodePools of the shape before v1beta1 are refused when the scenario is read.
		"pool of the old template": {"objects:\n- {apiVersion: stratos.sh/v1beta1, kind: NodePool, metadata: {name: p}, spec: {template: {nodeClassRef: {kind: FakeNodeClass, name: default}}}}\nsteps:\n- sleep: 1s\n",
			`unknown field "nodeClassRef"`},
		"pool expiring under disruption": {"objects:\n- {apiVersion: stratos.sh/v1beta1, kind: NodePool, metadata: {name: p}, spec: {disruption: {expireAfter: 24h}}}\nsteps:\n- sleep: 1s\n",
			`unknown field "expireAfter"`},
		"applied pool of the old template": {"steps:\n- apply: [{apiVersion: stratos.sh/v1beta1, kind: NodePool, metadata: {name: p}, spec: {template: {requirements: []}}}]\n",
			`steps[0].apply[0]: NodePool p`},
		"pool of v1alpha1":         {"objects:\n- {apiVersion: stratos.sh/v1alpha1, kind: NodePool, metadata: {name: p}}\nsteps:\n- sleep: 1s\n", "the API is stratos.sh/v1beta1"},
		"since without a mark":     {"steps:\n- expect: {since: burst, launchedCold: {equals: 0}}\n", `steps[0]: since "burst" names no mark of an earlier step`},
		"since before its mark":    {"steps:\n- expect: {since: burst, launchedCold: {equals: 0}}\n- mark: burst\n", `since "burst" names no mark`},
		"mark taken twice":         {"steps:\n- mark: burst\n- mark: burst\n", `steps[1]: mark "burst" is already taken`},
		"since of the moment":      {"steps:\n- mark: burst\n- expect: {since: burst, podsRunning: {equals: 8}}\n", "since burst: it applies only to"},
		"mark and another":         {"steps:\n- mark: burst\n  sleep: 1s\n", "exactly one action"},
		"bad served path":          {"steps:\n- expect: {podsServed: [{path: warm, equals: 1}]}\n", `path "warm" is not one of`},
		"served without bound":     {"steps:\n- expect: {podsServed: [{path: cold}]}\n", "pods served cold: one of equals"},
		"bad buffer condition":     {"steps:\n- expect: {bufferConditions: [{type: Ready, equals: 1}]}\n", `type "Ready" is not one of`},
		"bad buffer status":        {"steps:\n- expect: {bufferConditions: [{type: Provisioning, status: Maybe, equals: 1}]}\n", `status "Maybe" is not one of`},
		"buffer of a typo":         {"objects:\n- {apiVersion: autoscaling.x-k8s.io/v1beta1, kind: CapacityBuffer, metadata: {name: b}, spec: {replica: 3}}\nsteps:\n- sleep: 1s\n", `CapacityBuffer b: error unmarshaling JSON: while decoding JSON: json: unknown field "replica"`},
		"buffer of v1alpha1":       {"objects:\n- {apiVersion: autoscaling.x-k8s.io/v1alpha1, kind: CapacityBuffer, metadata: {name: b}}\nsteps:\n- sleep: 1s\n", "Stratos serves autoscaling.x-k8s.io/v1beta1"},
		"unknown autoscaling kind": {"steps:\n- apply: [{apiVersion: autoscaling.x-k8s.io/v1beta1, kind: Buffer, metadata: {name: b}}]\n", "kind Buffer is not one of"},
		"unknown stratos kind":     {"objects:\n- {apiVersion: stratos.sh/v1beta1, kind: AWSNodeClass, metadata: {name: c}}\nsteps:\n- sleep: 1s\n", "kind AWSNodeClass is not one of"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// A mark, the since that counts from it, and the counts of paths and buffers parse.
func TestParseWindows(t *testing.T) {
	s, err := Parse([]byte(`
objects:
- apiVersion: autoscaling.x-k8s.io/v1beta1
  kind: CapacityBuffer
  metadata: {name: web}
  spec: {scalableRef: {apiGroup: apps, kind: Deployment, name: web}, replicas: 4}
steps:
- wait: {bufferConditions: [{buffer: web, type: Provisioning, atLeast: 1}], timeout: 1m}
- expect: {bufferConditions: [{type: LimitedByQuotas, status: false, equals: 1}]}
- mark: burst
- wait:
    since: burst
    podsServed: [{path: existing, equals: 4}]
    launchedCold: {equals: 0}
    timeout: 1m
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Steps[2].Mark != "burst" || s.Steps[3].Wait.Since != "burst" || s.Steps[3].Wait.PodsServed[0].Path != "existing" {
		t.Errorf("steps = %+v", s.Steps)
	}
	if got := s.Steps[0].Wait.BufferConditions[0].StatusOrDefault(); got != "True" {
		t.Errorf("a buffer condition's status defaults to %q, want True", got)
	}
	if got := s.Steps[1].Expect.BufferConditions[0].StatusOrDefault(); got != "False" {
		t.Errorf("status: false (YAML's boolean) reads as %q, want False", got)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(path, []byte("steps: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "broken.yaml") {
		t.Errorf("got %v, want an error naming the file", err)
	}
}
