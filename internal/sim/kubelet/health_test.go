package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/test/harness"
)

// TestUnhealthyKubelets checks, against an API server, what each way of failing reports.
func TestUnhealthyKubelets(t *testing.T) {
	env := harness.StartT(t)
	c, clk := newCloud(t, fakecloud.Options{})
	ctx, cancel := context.WithCancel(logf.IntoContext(context.Background(), testr.New(t)))
	done := make(chan error)
	go func() {
		done <- NewKubelet(c, env.Client, KubeletOptions{HeartbeatInterval: 100 * time.Millisecond}).Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("kubelet: %v", err)
		}
	})
	notReady, problem, silent := create(t, c, onDemand("not-ready")), create(t, c, onDemand("problem")), create(t, c, onDemand("silent"))
	p := c.Physics()
	clk.Step(p.LaunchDelay + p.BootDelay + p.ReadyDelay)
	nodeOf := func(id string) string { return view(t, c, id).NodeName }
	getNode := func(ctx context.Context, id string) (*corev1.Node, error) {
		node := &corev1.Node{}
		return node, env.Client.Get(ctx, client.ObjectKey{Name: nodeOf(id)}, node)
	}
	conditionIs := func(id string, what corev1.NodeConditionType, want corev1.ConditionStatus) {
		t.Helper()
		eventually(t, string(what)+" "+string(want)+" on "+id, func(ctx context.Context) (bool, error) {
			node, err := getNode(ctx, id)
			if err != nil {
				return false, err
			}
			c := condition(node, what)
			return c != nil && c.Status == want, nil
		})
	}
	for _, id := range []string{notReady.ID, problem.ID, silent.ID} {
		conditionIs(id, corev1.NodeReady, corev1.ConditionTrue)
	}
	lease := &coordinationv1.Lease{}
	renewedAt := func(ctx context.Context) (time.Time, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: nodeOf(silent.ID)}, lease)
		if err != nil || lease.Spec.RenewTime == nil {
			return time.Time{}, err
		}
		return lease.Spec.RenewTime.Time, nil
	}
	var before time.Time
	eventually(t, "the silent one's Lease", func(ctx context.Context) (bool, error) {
		var err error
		before, err = renewedAt(ctx)
		return !before.IsZero(), err
	})

	if err := c.MakeUnhealthy([]string{notReady.ID}, physics.Unhealthy{}); err != nil {
		t.Fatal(err)
	}
	if err := c.MakeUnhealthy([]string{problem.ID}, physics.Unhealthy{Condition: "KernelDeadlock"}); err != nil {
		t.Fatal(err)
	}
	if err := c.MakeUnhealthy([]string{silent.ID}, physics.Unhealthy{Silent: true}); err != nil {
		t.Fatal(err)
	}
	conditionIs(notReady.ID, corev1.NodeReady, corev1.ConditionFalse)
	node, err := getNode(context.Background(), notReady.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := ready(node); r.Reason != "KubeletNotReady" || r.Message != messageRuntimeDown {
		t.Errorf("Ready of the kubelet whose runtime is down: %+v", r)
	}
	conditionIs(problem.ID, "KernelDeadlock", corev1.ConditionTrue)
	conditionIs(problem.ID, corev1.NodeReady, corev1.ConditionTrue)

	// The silent kubelet renews its Lease no more: over many heartbeats, the renewal
	// time stays where the sickness found it (one renewal may have been under way).
	eventually(t, "the silent one's last renewal", func(ctx context.Context) (bool, error) {
		var err error
		before, err = renewedAt(ctx)
		return err == nil, err
	})
	// Polled for a second, ten heartbeats: a renewal ends the poll early, a failure. Each
	// read has a context of its own: under the poll's, a read near the end of the second
	// fails in the client's rate limiter ("would exceed context deadline"), which is no
	// renewal.
	renewed := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Second, false, func(context.Context) (bool, error) {
		after, err := renewedAt(context.Background())
		return after.After(before.Add(200 * time.Millisecond)), err
	})
	if !wait.Interrupted(renewed) {
		t.Fatalf("the silent kubelet renewed its Lease after %s, or reading it failed: %v", before, renewed)
	}
	wantState(t, c, silent.ID, cloudprovider.StateRunning)
}
