// Package scenario is the simulator's scenario file: the cloud's physics and faults, a
// time scale, objects to apply, and steps that drive workloads, the operator and the
// clock and wait for or expect conditions. docs/simulator.md documents the format.
package scenario

import (
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// Scenario is one scenario file.
type Scenario struct {
	// Name defaults to the file name without its extension.
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// TimeScale divides every delay of the cloud's physics, and every duration of the
	// steps, so that a scenario means the same at any scale. Defaults to 1.
	TimeScale float64 `json:"timeScale,omitempty"`
	// Cloud is the cloud the scenario runs against: fake (the default) or aws (the EC2
	// provider against moto). stratos-sim run --cloud overrides it.
	Cloud string `json:"cloud,omitempty"`
	// Seed of the cloud's jitter and faults, and of the steps' random moments.
	Seed int64 `json:"seed,omitempty"`
	// OperatorArgs are extra flags for the stratos binary, such as
	// --batch-max-duration=500ms, to compare settings on the same scenario.
	OperatorArgs []string `json:"operatorArgs,omitempty"`
	// Physics overrides the cloud's default timings. On aws they time the kubelets only,
	// from the moment an instance is seen running; stopDelay, terminateDelay and the
	// hibernation's delays are the fake cloud's.
	Physics *v1beta1.FakePhysics `json:"physics,omitempty"`
	// CallLatency is how long the cloud takes to answer each call, in wall time and not
	// scaled, as a real cloud's API takes: on the fake cloud each instance call (see
	// fake.Options.CallLatency), on aws each call of the operator, held by the proxy in
	// front of moto before moto answers. Defaults to 0: every call answers at once.
	CallLatency *metav1.Duration `json:"callLatency,omitempty"`
	// Faults are injected from the start.
	Faults *fakecloud.Faults `json:"faults,omitempty"`
	// Objects are applied in order before the first step: node classes, pools,
	// namespaces, Deployments, PodDisruptionBudgets…
	Objects []unstructured.Unstructured `json:"objects,omitempty"`
	// Steps run in order; a failed wait or expectation fails the scenario and ends it.
	Steps []Step `json:"steps"`
}

// Load reads and validates a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse decodes and validates a scenario; unknown fields are errors, so a typo does
// not silently change what a scenario tests.
func Parse(data []byte) (*Scenario, error) {
	s := &Scenario{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		return nil, err
	}
	if s.TimeScale == 0 {
		s.TimeScale = 1
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Cloud == "" {
		s.Cloud = CloudFake
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}
