package scenario

import (
	"errors"
	"fmt"

	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The clouds a scenario runs against.
const (
	// CloudFake is the simulator's fake cloud, in its own process: physics and faults.
	CloudFake = "fake"
	// CloudAWS is the EC2 provider against moto, an EC2 emulator, with the simulator's
	// kubelets registering a Node for each running instance.
	CloudAWS = "aws"
	// CloudClusterAPI is the Cluster API provider against CAPI's own core controllers,
	// with the simulator's infrastructure provider booting each Machine as an instance of
	// the fake cloud, whose kubelet simulator registers its Node.
	CloudClusterAPI = "clusterapi"
)

// Clouds are the values of cloud.
var Clouds = []string{CloudFake, CloudAWS, CloudClusterAPI}

// validateCloud reports what the scenario asks of the fake cloud that its cloud cannot
// do, naming each field.
func (s *Scenario) validateCloud() error {
	switch s.Cloud {
	case "", CloudFake:
		return nil
	case CloudAWS:
		return s.refuse(awsLimits)
	case CloudClusterAPI:
		return s.refuse(clusterAPILimits)
	default:
		return fmt.Errorf("cloud %q is not one of %v", s.Cloud, Clouds)
	}
}

// cloudLimits say which of the fake cloud's knobs a cloud lacks, each with why: the
// reason is empty for what the cloud has.
type cloudLimits struct {
	// physics is the reason for each physics field the cloud ignores, by JSON name.
	physics map[string]string
	// faults is the reason for the faults of the scenario and of faults and clearFaults
	// steps; with keepsNeverRegister, for those other than neverRegister only, which the
	// cloud's kubelets still have.
	faults             string
	keepsNeverRegister bool
	// interrupt and unhealthy are the reasons for those steps.
	interrupt, unhealthy string
	// classFields is the reason for each FakeNodeClass spec field the cloud's node class
	// cannot carry, by JSON name.
	classFields map[string]string
}

const onlyFake = "only the fake cloud has it, and the scenario runs on aws (moto)"

// awsLimits: moto stops and terminates at once, knows no faults and gives no notices;
// the simulator's kubelets on it take the rest of the physics.
var awsLimits = cloudLimits{
	physics: map[string]string{
		"stopDelay": onlyFake, "terminateDelay": onlyFake, "hibernateDelay": onlyFake, "hibernateResumeDelay": onlyFake,
	},
	faults:    onlyFake,
	interrupt: onlyFake, unhealthy: onlyFake,
	classFields: map[string]string{"zones": onlyFake, "physics": onlyFake, "faults": onlyFake},
}

// On clusterapi the fake cloud still runs every machine, under the simulator's
// infrastructure provider: its physics time the machines and its kubelet simulator
// fails on demand. But the operator never calls it: CAPI's controllers and the
// simulator's provider do, so faults of the operator's calls cannot be injected, and
// notices do not reach the operator. Machines are powered off, never hibernated.
const (
	noHibernation = "Cluster API machines are powered off, never hibernated, and the scenario runs on clusterapi"
	notCalled     = "the operator does not call the fake cloud on clusterapi (CAPI's controllers and the simulator's infrastructure provider do), so faults of its calls cannot be injected; only neverRegister applies"
	noNotices     = "the operator hears no cloud notices on clusterapi: CAPI has none"
	perClass      = "the simulator's infrastructure provider launches every machine with the cloud's physics and faults, not a class's, on clusterapi"
)

var clusterAPILimits = cloudLimits{
	physics:            map[string]string{"hibernateDelay": noHibernation, "hibernateResumeDelay": noHibernation},
	faults:             notCalled,
	keepsNeverRegister: true,
	interrupt:          noNotices,
	classFields:        map[string]string{"hibernate": noHibernation, "physics": perClass, "faults": perClass},
}

// refuse names every field of the scenario the cloud's limits rule out.
func (s *Scenario) refuse(limits cloudLimits) error {
	var errs []error
	refused := func(field, why string) {
		if why != "" {
			errs = append(errs, fmt.Errorf("%s: %s", field, why))
		}
	}
	if p := s.Physics; p != nil {
		for _, field := range []struct {
			name string
			set  bool
		}{
			{"stopDelay", p.StopDelay != nil}, {"terminateDelay", p.TerminateDelay != nil},
			{"hibernateDelay", p.HibernateDelay != nil}, {"hibernateResumeDelay", p.HibernateResumeDelay != nil},
		} {
			if field.set {
				refused("physics."+field.name, limits.physics[field.name])
			}
		}
	}
	faults := func(where string, f *fakecloud.Faults) {
		switch {
		case f == nil:
		case !limits.keepsNeverRegister:
			refused(where, limits.faults)
		default:
			for _, field := range []struct {
				name string
				set  bool
			}{
				{"errors", len(f.Errors) > 0}, {"rateLimits", len(f.RateLimits) > 0}, {"insufficientCapacity", len(f.InsufficientCapacity) > 0},
			} {
				if field.set {
					refused(where+"."+field.name, limits.faults)
				}
			}
		}
	}
	faults("faults", s.Faults)
	for i, o := range s.Objects {
		errs = append(errs, prefix(fmt.Sprintf("objects[%d]", i), limits.refuseClass(o)))
	}
	for i, st := range s.Steps {
		step := fmt.Sprintf("steps[%d]", i)
		faults(step+": faults", st.Faults)
		if st.ClearFaults && !limits.keepsNeverRegister {
			refused(step+": clearFaults", limits.faults)
		}
		if st.Interrupt != nil {
			refused(step+": interrupt", limits.interrupt)
		}
		if st.Unhealthy != nil {
			refused(step+": unhealthy", limits.unhealthy)
		}
		for j, o := range st.Apply {
			errs = append(errs, prefix(fmt.Sprintf("%s: apply[%d]", step, j), limits.refuseClass(o)))
		}
	}
	return errors.Join(errs...)
}

// refuseClass refuses the fields of a FakeNodeClass that the cloud's node class cannot
// carry.
func (limits cloudLimits) refuseClass(o unstructured.Unstructured) error {
	if o.GetKind() != "FakeNodeClass" {
		return nil
	}
	var errs []error
	for _, field := range []string{"instanceTypes", "zones", "hibernate", "physics", "faults"} {
		why := limits.classFields[field]
		if _, set, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", field); set && why != "" {
			errs = append(errs, fmt.Errorf("FakeNodeClass %s: spec.%s: %s", o.GetName(), field, why))
		}
	}
	return errors.Join(errs...)
}
