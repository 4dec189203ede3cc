package scenario

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The clouds a scenario runs against.
const (
	// CloudFake is the simulator's fake cloud, in its own process: physics and faults.
	CloudFake = "fake"
	// CloudAWS is the EC2 provider against moto, an EC2 emulator, with the simulator's
	// kubelets registering a Node for each running instance.
	CloudAWS = "aws"
)

// Clouds are the values of cloud.
var Clouds = []string{CloudFake, CloudAWS}

// fakeOnlyClassFields are the FakeNodeClass fields with no counterpart on aws, where the
// class becomes an EC2NodeClass.
var fakeOnlyClassFields = []string{"zones", "physics", "faults"}

// validateCloud reports what the scenario asks of the fake cloud that its cloud cannot
// do, naming each field.
func (s *Scenario) validateCloud() error {
	switch s.Cloud {
	case "", CloudFake:
		return nil
	case CloudAWS:
	default:
		return fmt.Errorf("cloud %q is not one of %v", s.Cloud, Clouds)
	}
	var errs []error
	fakeOnly := func(field string) {
		errs = append(errs, fmt.Errorf("%s: only the fake cloud has it, and the scenario runs on aws (moto)", field))
	}
	// The other physics time the kubelets on either cloud; moto stops and terminates at once.
	if s.Physics != nil && s.Physics.StopDelay != nil {
		fakeOnly("physics.stopDelay")
	}
	if s.Physics != nil && s.Physics.TerminateDelay != nil {
		fakeOnly("physics.terminateDelay")
	}
	if s.Physics != nil && s.Physics.HibernateDelay != nil {
		fakeOnly("physics.hibernateDelay")
	}
	if s.Physics != nil && s.Physics.HibernateResumeDelay != nil {
		fakeOnly("physics.hibernateResumeDelay")
	}
	if s.Faults != nil {
		fakeOnly("faults")
	}
	for i, o := range s.Objects {
		errs = append(errs, prefix(fmt.Sprintf("objects[%d]", i), fakeClassOnAWS(o)))
	}
	for i, st := range s.Steps {
		if st.Faults != nil {
			fakeOnly(fmt.Sprintf("steps[%d]: faults", i))
		}
		if st.ClearFaults {
			fakeOnly(fmt.Sprintf("steps[%d]: clearFaults", i))
		}
		if st.Interrupt != nil {
			fakeOnly(fmt.Sprintf("steps[%d]: interrupt", i))
		}
		if st.Unhealthy != nil {
			fakeOnly(fmt.Sprintf("steps[%d]: unhealthy", i))
		}
		for j, o := range st.Apply {
			errs = append(errs, prefix(fmt.Sprintf("steps[%d]: apply[%d]", i, j), fakeClassOnAWS(o)))
		}
	}
	return errors.Join(errs...)
}

// fakeClassOnAWS refuses the fields of a FakeNodeClass that an EC2NodeClass cannot carry.
func fakeClassOnAWS(o unstructured.Unstructured) error {
	if o.GetKind() != "FakeNodeClass" {
		return nil
	}
	var errs []error
	for _, field := range fakeOnlyClassFields {
		if _, set, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", field); set {
			errs = append(errs, fmt.Errorf("FakeNodeClass %s: spec.%s: only the fake cloud has it, and the scenario runs on aws (moto)", o.GetName(), field))
		}
	}
	return errors.Join(errs...)
}
