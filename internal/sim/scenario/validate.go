package scenario

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// Operations are the fake cloud's operation names that faults may name.
var Operations = []string{cloudprovider.OpCreate, cloudprovider.OpStart, cloudprovider.OpStop, cloudprovider.OpTerminate, cloudprovider.OpGet, cloudprovider.OpList}

// errorCodes are the codes an injected error may carry.
var errorCodes = []cloudprovider.ErrorCode{
	cloudprovider.CodeInternal, cloudprovider.CodeThrottled, cloudprovider.CodeInsufficientCapacity,
	cloudprovider.CodeQuotaExceeded, cloudprovider.CodeInvalidState, cloudprovider.CodeNotFound,
}

// isClaimPhase reports whether a claims condition names a NodeClaim phase.
func isClaimPhase(phase string) bool {
	return slices.Contains(v1beta1.Phases, v1beta1.NodeClaimPhase(phase))
}

// Validate reports every mistake in the scenario, each with where it is.
func (s *Scenario) Validate() error {
	var errs []error
	if s.TimeScale <= 0 {
		errs = append(errs, fmt.Errorf("timeScale must be positive, got %v", s.TimeScale))
	}
	if len(s.Steps) == 0 {
		errs = append(errs, errors.New("steps: at least one step is required"))
	}
	if s.CallLatency != nil && s.CallLatency.Duration < 0 {
		errs = append(errs, fmt.Errorf("callLatency must not be negative, got %s", s.CallLatency.Duration))
	}
	if s.Faults != nil {
		errs = append(errs, prefix("faults", validateFaults(s.Faults)))
	}
	for i, o := range s.Objects {
		if o.GetKind() == "" || o.GetAPIVersion() == "" || o.GetName() == "" {
			errs = append(errs, fmt.Errorf("objects[%d]: apiVersion, kind and metadata.name are required", i))
		}
		errs = append(errs, prefix(fmt.Sprintf("objects[%d]", i), checkObject(o)))
	}
	for i := range s.Steps {
		errs = append(errs, prefix(fmt.Sprintf("steps[%d]", i), s.Steps[i].validate()))
		for j, o := range s.Steps[i].Apply {
			errs = append(errs, prefix(fmt.Sprintf("steps[%d].apply[%d]", i, j), checkObject(o)))
		}
	}
	errs = append(errs, s.validateMarks(), s.validateCloud())
	return errors.Join(errs...)
}

func (st *Step) validate() error {
	actions := 0
	for _, set := range []bool{st.Wait != nil, st.Expect != nil, st.Sleep != nil, st.Mark != "", st.Burst != nil, st.Scale != nil,
		st.Delete != nil, st.Apply != nil, st.RestartOperator != nil, st.KillOperator != nil, st.SetClock != nil, st.Faults != nil, st.ClearFaults,
		st.Interrupt != nil, st.Unhealthy != nil} {
		if set {
			actions++
		}
	}
	if actions != 1 {
		return fmt.Errorf("exactly one action is required (wait, expect, sleep, mark, burst, scale, delete, apply, restartOperator, killOperator, setClock, faults, clearFaults, interrupt, unhealthy), got %d", actions)
	}
	switch {
	case st.Wait != nil:
		if st.Wait.Timeout.Duration <= 0 {
			return errors.New("wait: timeout must be positive")
		}
		return prefix("wait", st.Wait.Condition.validate())
	case st.Expect != nil:
		return prefix("expect", st.Expect.validate())
	case st.Sleep != nil && st.Sleep.Duration <= 0:
		return errors.New("sleep must be positive")
	case st.Burst != nil:
		return prefix("burst", st.Burst.validate())
	case st.Scale != nil:
		if st.Scale.Replicas < 0 {
			return errors.New("scale: replicas must not be negative")
		}
		return prefix("scale", st.Scale.WorkloadRef.validate())
	case st.Delete != nil:
		return prefix("delete", st.Delete.validate())
	case st.KillOperator != nil && st.KillOperator.Within.Duration <= 0:
		return errors.New("killOperator: within must be positive")
	case st.Faults != nil:
		return prefix("faults", validateFaults(st.Faults))
	case st.Interrupt != nil:
		return prefix("interrupt", st.Interrupt.validate())
	case st.Unhealthy != nil:
		return prefix("unhealthy", st.Unhealthy.validate())
	}
	return nil
}

func (c *Condition) validate() error {
	counts := c.Counts()
	if len(counts) == 0 {
		return errors.New("no condition is set")
	}
	var errs []error
	for _, count := range counts {
		if count.Event != nil && count.Event.Reason == "" {
			errs = append(errs, fmt.Errorf("%s: reason is required", count.Name))
		}
		if count.PoolCondition != nil && count.PoolCondition.Type == "" {
			errs = append(errs, fmt.Errorf("%s: type is required, such as Degraded", count.Name))
		}
		if count.Claims != nil && count.Claims.Phase != "" && !isClaimPhase(count.Claims.Phase) {
			errs = append(errs, fmt.Errorf("%s: phase %q is not one of %v", count.Name, count.Claims.Phase, v1beta1.Phases))
		}
		if count.Claims != nil && count.Claims.CapacityType != "" && !slices.Contains(capacityTypes, count.Claims.CapacityType) {
			errs = append(errs, fmt.Errorf("%s: capacityType %q is not one of %v", count.Name, count.Claims.CapacityType, capacityTypes))
		}
		if count.Nodes != nil && count.Nodes.CapacityType != "" && !slices.Contains(capacityTypes, count.Nodes.CapacityType) {
			errs = append(errs, fmt.Errorf("%s: capacityType %q is not one of %v", count.Name, count.Nodes.CapacityType, capacityTypes))
		}
		if count.Latency != nil {
			if !slices.Contains(Percentiles, count.Latency.Percentile) {
				errs = append(errs, fmt.Errorf("%s: percentile %d is not one of %v", count.Name, count.Latency.Percentile, Percentiles))
			}
			errs = append(errs, prefix(count.Name, count.Latency.WorkloadRef.validate()))
		}
		if count.CloudCalls != nil && count.CloudCalls.Operation == "" {
			errs = append(errs, fmt.Errorf("%s: operation is required", count.Name))
		}
		for _, pool := range []*PoolCount{count.StandbyHours, count.StandbyTarget} {
			if pool != nil && pool.Pool == "" {
				errs = append(errs, fmt.Errorf("%s: pool is required", count.Name))
			}
		}
		errs = append(errs, prefix(count.Name, count.Want.validate()))
	}
	errs = append(errs, c.validateWindowCounts())
	return errors.Join(errs...)
}

func (c *Count) validate() error {
	if c.Equals == nil && c.AtLeast == nil && c.AtMost == nil {
		return errors.New("one of equals, atLeast or atMost is required")
	}
	return nil
}

func (w *Workload) validate() error {
	errs := []error{w.WorkloadRef.validate()}
	if w.Replicas < 0 {
		errs = append(errs, errors.New("replicas must not be negative"))
	}
	for field, q := range map[string]string{"cpu": w.CPU, "memory": w.Memory} {
		if _, err := resource.ParseQuantity(q); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", field, q, err))
		}
	}
	for _, key := range w.Spread {
		if key != "zone" && key != "hostname" {
			errs = append(errs, fmt.Errorf("spread: %q is not zone or hostname", key))
		}
	}
	if w.AntiAffinity != "" && w.AntiAffinity != "zone" && w.AntiAffinity != "hostname" {
		errs = append(errs, fmt.Errorf("antiAffinity: %q is not zone or hostname", w.AntiAffinity))
	}
	for _, claim := range w.Claims {
		if msgs := validation.IsDNS1123Subdomain(claim); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("claims: %q: %v", claim, msgs))
		}
	}
	return errors.Join(errs...)
}

func (r *WorkloadRef) validate() error {
	if msgs := validation.IsDNS1123Subdomain(r.Name); len(msgs) > 0 {
		return fmt.Errorf("name %q: %v", r.Name, msgs)
	}
	return nil
}

// validateFaults checks a scenario's faults (the fake cloud's Faults) by the format's rules.
func validateFaults(f *fakecloud.Faults) error {
	var errs []error
	for op, e := range f.Errors {
		if !slices.Contains(Operations, op) {
			errs = append(errs, fmt.Errorf("errors: operation %q is not one of %v", op, Operations))
		}
		if e.Code != "" && !slices.Contains(errorCodes, e.Code) {
			errs = append(errs, fmt.Errorf("errors.%s: code %q is not one of %v", op, e.Code, errorCodes))
		}
		if e.Probability < 0 || e.Probability > 1 {
			errs = append(errs, fmt.Errorf("errors.%s: probability must be within [0, 1]", op))
		}
	}
	for op, l := range f.RateLimits {
		if !slices.Contains(Operations, op) {
			errs = append(errs, fmt.Errorf("rateLimits: operation %q is not one of %v", op, Operations))
		}
		if l.PerSecond <= 0 || l.Burst <= 0 {
			errs = append(errs, fmt.Errorf("rateLimits.%s: perSecond and burst must be positive", op))
		}
	}
	if f.NeverRegister < 0 || f.NeverRegister > 1 {
		errs = append(errs, errors.New("neverRegister must be within [0, 1]"))
	}
	for i, o := range f.InsufficientCapacity {
		if o.CapacityType != "" && !slices.Contains(capacityTypes, o.CapacityType) {
			errs = append(errs, fmt.Errorf("insufficientCapacity[%d]: capacityType %q is not one of %v", i, o.CapacityType, capacityTypes))
		}
	}
	return errors.Join(errs...)
}

func prefix(where string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", where, err)
}
