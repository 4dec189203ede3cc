package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// pollInterval is how often a wait looks at the cluster, in wall time.
const pollInterval = 100 * time.Millisecond

// runSteps runs the steps in order until one fails.
func (r *run) runSteps(ctx context.Context) {
	for i := range r.opts.Scenario.Steps {
		step := &r.opts.Scenario.Steps[i]
		description := step.Description
		if description == "" {
			description = describeStep(step)
		}
		r.progress("step %d/%d: %s", i+1, len(r.opts.Scenario.Steps), description)
		began, callsBefore, claimsBefore := r.now(), r.cloud.calls(), r.observer.counters()
		err := r.runStep(ctx, step)
		claims := r.observer.counters()
		result := report.Step{
			Index: i + 1, Description: description, OK: err == nil, Seconds: r.now() - began, CloudCalls: since(callsBefore, r.cloud.calls()),
			LaunchedCold:       claims.launchedCold - claimsBefore.launchedCold,
			StartedFromStandby: claims.startedFromStandby - claimsBefore.startedFromStandby,
			TakenWhileWarming:  claims.takenWhileWarming - claimsBefore.takenWhileWarming,
		}
		if err != nil {
			result.Message = err.Error()
			r.fail("step %d (%s): %v", i+1, description, err)
		}
		r.report.Steps = append(r.report.Steps, result)
		if err != nil {
			r.progress("step %d failed: %v", i+1, err)
			return
		}
	}
}

func (r *run) runStep(ctx context.Context, st *scenario.Step) error {
	switch {
	case st.Wait != nil:
		return r.wait(ctx, &st.Wait.Condition, r.wall(st.Wait.Timeout.Duration))
	case st.Expect != nil:
		v, err := r.look(ctx)
		if err != nil {
			return err
		}
		if ok, why := holds(st.Expect, v); !ok {
			return fmt.Errorf("expectation failed: %s", why)
		}
		return nil
	case st.Sleep != nil:
		return pause(ctx, r.wall(st.Sleep.Duration))
	case st.Mark != "":
		r.mark(st.Mark)
		return nil
	case st.Burst != nil:
		return createWorkload(ctx, r.client, st.Burst)
	case st.Scale != nil:
		return scaleWorkload(ctx, r.client, st.Scale)
	case st.Delete != nil:
		return deleteWorkload(ctx, r.client, st.Delete)
	case st.Apply != nil:
		return apply(ctx, r.client, st.Apply)
	case st.RestartOperator != nil:
		return r.operator.Restart(false, 0)
	case st.KillOperator != nil:
		r.scheduleKill(ctx, st.KillOperator)
		return nil
	case st.SetClock != nil:
		return r.setClock(ctx, *st.SetClock)
	case st.Faults != nil:
		r.cloud.setFaults(st.Faults)
		return nil
	case st.ClearFaults:
		r.cloud.setFaults(nil)
		return nil
	case st.Interrupt != nil:
		return r.interrupt(ctx, st.Interrupt)
	case st.Unhealthy != nil:
		return r.makeUnhealthy(ctx, st.Unhealthy)
	}
	return fmt.Errorf("the step has no action")
}

// look reads the view a condition is evaluated on, costly counts included.
func (r *run) look(ctx context.Context) (*view, error) {
	v, err := look(ctx, r.client, r.observer)
	if v != nil {
		v.costly = costly{ctx: ctx, r: r}
		v.marks = r.markedMoments()
	}
	return v, err
}

// wait polls the condition until it holds or timeout (wall time) passes.
func (r *run) wait(ctx context.Context, c *scenario.Condition, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		v, err := r.look(ctx)
		if err != nil {
			return err
		}
		ok, why := holds(c, v)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s (scenario time): %s", time.Duration(float64(timeout)*r.scale).Round(time.Millisecond), why)
		}
		if err := pause(ctx, pollInterval); err != nil {
			return err
		}
	}
}

// scheduleKill kills the operator hard at a moment drawn uniformly within the window,
// then starts it again, while the following steps run.
func (r *run) scheduleKill(ctx context.Context, k *scenario.Kill) {
	at := time.Duration(r.rng.Int64N(int64(r.wall(k.Within.Duration)) + 1))
	restartAfter := r.wall(k.RestartAfter.Duration)
	if k.RestartAfter.Duration == 0 {
		restartAfter = r.wall(time.Second)
	}
	r.kills.Add(1)
	go func() {
		defer r.kills.Done()
		if pause(ctx, at) != nil {
			return
		}
		r.progress("killing the operator (SIGKILL) %.1fs into the window", at.Seconds()*r.scale)
		if err := r.operator.Restart(true, restartAfter); err != nil {
			r.fail("restarting the operator after a kill: %v", err)
		}
	}()
}

// pause waits d or until ctx ends. Scenario sleeps and kill moments are time the
// scenario lets pass on purpose, not synchronisation.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// since returns the counts that grew from before to after, by how much.
func since(before, after map[string]int) map[string]int {
	grown := map[string]int{}
	for key, n := range after {
		if n > before[key] {
			grown[key] = n - before[key]
		}
	}
	if len(grown) == 0 {
		return nil
	}
	return grown
}

func describeStep(st *scenario.Step) string {
	switch {
	case st.Wait != nil:
		return fmt.Sprintf("wait up to %s for %s", st.Wait.Timeout.Duration, describeCondition(&st.Wait.Condition))
	case st.Expect != nil:
		return "expect " + describeCondition(st.Expect)
	case st.Sleep != nil:
		return "sleep " + st.Sleep.Duration.String()
	case st.Mark != "":
		return "mark " + st.Mark
	case st.Burst != nil:
		return fmt.Sprintf("burst %s: %d pods of %s CPU, %s memory", st.Burst.Name, st.Burst.Replicas, st.Burst.CPU, st.Burst.Memory)
	case st.Scale != nil:
		return fmt.Sprintf("scale %s to %d", st.Scale.Name, st.Scale.Replicas)
	case st.Delete != nil:
		return "delete " + st.Delete.Name
	case st.Apply != nil:
		return fmt.Sprintf("apply %d objects", len(st.Apply))
	case st.RestartOperator != nil:
		return "restart the operator"
	case st.KillOperator != nil:
		return fmt.Sprintf("kill the operator hard within %s", st.KillOperator.Within.Duration)
	case st.SetClock != nil:
		return "set the windows' clock to " + st.SetClock.Format(time.RFC3339)
	case st.Faults != nil:
		return "inject faults"
	case st.ClearFaults:
		return "clear faults"
	case st.Interrupt != nil:
		return describeInterrupt(st.Interrupt)
	case st.Unhealthy != nil:
		return describeUnhealthy(st.Unhealthy)
	}
	return "?"
}

func describeInterrupt(in *scenario.Interrupt) string {
	which := "every"
	switch {
	case in.Count != nil:
		which = fmt.Sprint(*in.Count)
	case in.Share != nil:
		which = fmt.Sprintf("%g%% of the", *in.Share*100)
	}
	text := fmt.Sprintf("%s notice to %s %s instance(s) holding pods%s", in.KindOrDefault(), which, orAny(in.CapacityTypeOrDefault()), ofPool(in.NodePool))
	if in.KindOrDefault() != scenario.KindRebalance {
		text += ", taken away after " + in.NoticeOrDefault().String()
	}
	if in.Every != nil {
		text += fmt.Sprintf(", %d batches %s apart", in.BatchesOrDefault(), in.Every.Duration)
	}
	return text
}

func describeUnhealthy(u *scenario.Unhealthy) string {
	how := "report Ready False"
	switch {
	case u.Condition != "":
		how = "report " + u.Condition + " True"
	case u.Silent:
		how = "go silent"
	}
	return fmt.Sprintf("the kubelets of %d Node(s) holding pods%s %s", u.CountOrDefault(), ofPool(u.NodePool), how)
}
