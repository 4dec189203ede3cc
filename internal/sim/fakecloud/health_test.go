package fakecloud

import (
	"testing"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/physics"
)

func TestMakeUnhealthyRefusesWhatItCannotDo(t *testing.T) {
	c, clk := newCloud(t, Options{})
	up := running(t, c, clk, request("up"))
	booting := create(t, c, request("booting"))
	for name, call := range map[string]func() error{
		"an unknown instance": func() error { return c.MakeUnhealthy([]string{up.ID, "i-unknown"}, physics.Unhealthy{}) },
		"a pending instance":  func() error { return c.MakeUnhealthy([]string{up.ID, booting.ID}, physics.Unhealthy{}) },
		"the Ready condition": func() error { return c.MakeUnhealthy([]string{up.ID}, physics.Unhealthy{Condition: "Ready"}) },
		"a silent condition": func() error {
			return c.MakeUnhealthy([]string{up.ID}, physics.Unhealthy{Condition: "KernelDeadlock", Silent: true})
		},
	} {
		if err := call(); err == nil {
			t.Errorf("making %s unhealthy succeeded", name)
		}
	}
	clk.Step(time.Hour)
	if v := view(t, c, up.ID); v.Unhealthy != nil {
		t.Errorf("a refused call made the instance unhealthy: %+v", v.Unhealthy)
	}
}

func TestAnUnhealthyKubeletHealsWithTheNextBoot(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := running(t, c, clk, onDemand("a"))
	clk.Step(c.physics.BootDelay + c.physics.ReadyDelay)
	sickAt := clk.Now()
	if err := c.MakeUnhealthy([]string{inst.ID}, physics.Unhealthy{}); err != nil {
		t.Fatal(err)
	}
	v := view(t, c, inst.ID)
	if v.Unhealthy == nil || !v.UnhealthySince.Equal(sickAt) || v.ReportsReady() {
		t.Fatalf("view %+v since %s: want unhealthy since %s, not reporting Ready", v.Unhealthy, v.UnhealthySince, sickAt)
	}
	if _, host, _ := c.PodHost(v.NodeName, "default/p"); host.Ready {
		t.Error("the pods of a kubelet whose runtime is down see it Ready")
	}
	if err := act(t, plainStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	if v := view(t, c, inst.ID); v.Unhealthy != nil {
		t.Errorf("a shutting-down kubelet reports a sickness: %+v", v.Unhealthy)
	}
	clk.Step(c.physics.StopDelay)
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.StartDelay + c.physics.ResumeDelay)
	if v := view(t, c, inst.ID); v.Unhealthy != nil || !v.ReportsReady() {
		t.Errorf("after a new boot: unhealthy %+v, ready %t", v.Unhealthy, v.ReportsReady())
	}
}
