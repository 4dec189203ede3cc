package scenario

import (
	"strings"
	"testing"
)

const fakeClass = `objects:
- apiVersion: stratos.sh/v1beta1
  kind: FakeNodeClass
  metadata: {name: default}
  spec: {instanceTypes: [m5.large], hibernate: true%s}
`

func TestCloudDefaultsToFake(t *testing.T) {
	s, err := Parse([]byte("steps:\n- sleep: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Cloud != CloudFake {
		t.Errorf("cloud %q, want fake", s.Cloud)
	}
}

func TestAWSRefusesWhatOnlyTheFakeCloudHas(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown cloud":          {"cloud: gcp\nsteps:\n- sleep: 1s\n", `cloud "gcp" is not one of [fake aws clusterapi]`},
		"faults":                 {"cloud: aws\nfaults: {neverRegister: 0.1}\nsteps:\n- sleep: 1s\n", "faults: only the fake cloud has it"},
		"stop delay":             {"cloud: aws\nphysics: {stopDelay: 1s}\nsteps:\n- sleep: 1s\n", "physics.stopDelay: only the fake cloud"},
		"terminate delay":        {"cloud: aws\nphysics: {terminateDelay: 1s}\nsteps:\n- sleep: 1s\n", "physics.terminateDelay"},
		"hibernate delay":        {"cloud: aws\nphysics: {hibernateDelay: 1s}\nsteps:\n- sleep: 1s\n", "physics.hibernateDelay: only the fake cloud"},
		"hibernate resume delay": {"cloud: aws\nphysics: {hibernateResumeDelay: 1s}\nsteps:\n- sleep: 1s\n", "physics.hibernateResumeDelay: only the fake cloud"},
		"a faults step":          {"cloud: aws\nsteps:\n- sleep: 1s\n- faults: {neverRegister: 0.1}\n", "steps[1]: faults: only the fake cloud"},
		"clearFaults":            {"cloud: aws\nsteps:\n- clearFaults: true\n", "steps[0]: clearFaults"},
		"class zones":            {"cloud: aws\n" + strings.Replace(fakeClass, "%s", ", zones: [fake-1a]", 1) + "steps:\n- sleep: 1s\n", "objects[0]: FakeNodeClass default: spec.zones: only the fake cloud"},
		"class physics":          {"cloud: aws\n" + strings.Replace(fakeClass, "%s", ", physics: {bootDelay: 1s}", 1) + "steps:\n- sleep: 1s\n", "spec.physics"},
		"applied class":          {"cloud: aws\nsteps:\n- apply:\n  - {apiVersion: stratos.sh/v1beta1, kind: FakeNodeClass, metadata: {name: x}, spec: {faults: {}}}\n", "steps[0]: apply[0]: FakeNodeClass x: spec.faults"},
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

func TestAWSAcceptsTheKubeletTimings(t *testing.T) {
	yaml := "cloud: aws\nphysics: {bootDelay: 5s, readyDelay: 2s}\n" + strings.Replace(fakeClass, "%s", "", 1) + "steps:\n- sleep: 1s\n"
	if _, err := Parse([]byte(yaml)); err != nil {
		t.Errorf("a class with instance types and hibernate, and the kubelets' timings, on aws: %v", err)
	}
}

// TestBundledScenariosOnAWS checks that the scenarios documented to run on aws ask
// nothing of the fake cloud alone.
func TestBundledScenariosOnAWS(t *testing.T) {
	for _, name := range []string{"quickstart.yaml", "give-back.yaml", "burst-aws-50.yaml"} {
		s, err := Load("../../../test/scenarios/" + name)
		if err != nil {
			t.Fatal(err)
		}
		s.Cloud = CloudAWS
		if err := s.Validate(); err != nil {
			t.Errorf("%s on aws: %v", name, err)
		}
	}
}

func TestClusterAPIRefusesWhatTheOperatorCannotReach(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"hibernate delay":        {"cloud: clusterapi\nphysics: {hibernateDelay: 1s}\nsteps:\n- sleep: 1s\n", "physics.hibernateDelay: Cluster API machines are powered off, never hibernated"},
		"hibernate resume delay": {"cloud: clusterapi\nphysics: {hibernateResumeDelay: 1s}\nsteps:\n- sleep: 1s\n", "physics.hibernateResumeDelay: Cluster API machines"},
		"call errors":            {"cloud: clusterapi\nfaults: {errors: {Start: {probability: 0.5}}}\nsteps:\n- sleep: 1s\n", "faults.errors: the operator does not call the fake cloud on clusterapi"},
		"rate limits":            {"cloud: clusterapi\nfaults: {rateLimits: {Create: {perSecond: 1, burst: 1}}}\nsteps:\n- sleep: 1s\n", "faults.rateLimits: the operator does not call"},
		"capacity":               {"cloud: clusterapi\nsteps:\n- faults: {insufficientCapacity: [{zone: fake-1a}]}\n", "steps[0]: faults.insufficientCapacity: the operator does not call"},
		"interrupt":              {"cloud: clusterapi\nsteps:\n- interrupt: {count: 1}\n", "steps[0]: interrupt: the operator hears no cloud notices on clusterapi"},
		"class hibernate":        {"cloud: clusterapi\n" + strings.Replace(fakeClass, "%s", "", 1) + "steps:\n- sleep: 1s\n", "objects[0]: FakeNodeClass default: spec.hibernate: Cluster API machines are powered off"},
		"class physics":          {"cloud: clusterapi\nsteps:\n- apply:\n  - {apiVersion: stratos.sh/v1beta1, kind: FakeNodeClass, metadata: {name: x}, spec: {physics: {bootDelay: 1s}}}\n", "steps[0]: apply[0]: FakeNodeClass x: spec.physics: the simulator's infrastructure provider launches every machine with the cloud's physics"},
		"class faults":           {"cloud: clusterapi\nobjects:\n- {apiVersion: stratos.sh/v1beta1, kind: FakeNodeClass, metadata: {name: x}, spec: {faults: {}}}\nsteps:\n- sleep: 1s\n", "FakeNodeClass x: spec.faults"},
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

// TestClusterAPIKeepsWhatTheFakeCloudStillRuns: the fake cloud runs every machine on
// clusterapi, so its physics (stops and terminations included), its kubelets' failures
// and the classes' instance types and zones apply.
func TestClusterAPIKeepsWhatTheFakeCloudStillRuns(t *testing.T) {
	yaml := `cloud: clusterapi
physics: {launchDelay: 5s, bootDelay: 5s, stopDelay: 2s, terminateDelay: 2s}
faults: {neverRegister: 0.1}
objects:
- apiVersion: stratos.sh/v1beta1
  kind: FakeNodeClass
  metadata: {name: default}
  spec: {instanceTypes: [m5.large], zones: [fake-1a]}
steps:
- faults: {neverRegister: 0.2}
- clearFaults: true
- unhealthy: {count: 1}
`
	if _, err := Parse([]byte(yaml)); err != nil {
		t.Errorf("physics, neverRegister, unhealthy steps and a class's types and zones on clusterapi: %v", err)
	}
}

// TestBundledScenariosOnClusterAPI checks that the scenarios documented to run on
// clusterapi ask nothing of the fake cloud that the operator cannot reach there.
func TestBundledScenariosOnClusterAPI(t *testing.T) {
	for _, name := range []string{"quickstart.yaml", "windows.yaml", "clusterapi-standby.yaml"} {
		s, err := Load("../../../test/scenarios/" + name)
		if err != nil {
			t.Fatal(err)
		}
		s.Cloud = CloudClusterAPI
		if err := s.Validate(); err != nil {
			t.Errorf("%s on clusterapi: %v", name, err)
		}
	}
}
