package kubelet

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

func TestKubeletRunsPods(t *testing.T) {
	pc := startPodCluster(t, 1)
	p := pc.cloud.Physics()

	t.Run("after its image and the container start delay", func(t *testing.T) {
		pc.t = t
		inst, nodeName := pc.readyNode("runs")
		key := pc.bind("web", nodeName)
		pc.waitPod(key, "pulling its image", func(pod *corev1.Pod) bool { return waitingReason(pod, "app") == reasonContainerCreating })

		pc.clk.Step(p.ImagePullDelay + p.ContainerStartDelay - tick)
		pc.settle(key)
		if pod := pc.pod(key); pod.Status.Phase != corev1.PodPending || podReady(pod) {
			t.Fatalf("before the delay: phase %s, conditions %v", pod.Status.Phase, pod.Status.Conditions)
		}
		pc.clk.Step(tick)
		pod := pc.waitPod(key, "Running and Ready", isRunningAndReady)

		privateIP := view(pc.t, pc.cloud, inst.ID).PrivateIP
		s := pod.Status
		if s.HostIP != privateIP || len(s.HostIPs) != 1 || s.HostIPs[0].IP != privateIP {
			t.Errorf("hostIP %s %v, want %s", s.HostIP, s.HostIPs, privateIP)
		}
		if s.PodIP == "" || s.PodIP == privateIP || len(s.PodIPs) != 1 || s.PodIPs[0].IP != s.PodIP {
			t.Errorf("podIP %s %v", s.PodIP, s.PodIPs)
		}
		if s.StartTime == nil || s.StartTime.After(pc.clk.Now()) {
			t.Errorf("startTime %v", s.StartTime)
		}
		for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			if cond := podCondition(pod, c); cond == nil || cond.Status != corev1.ConditionTrue {
				t.Errorf("condition %s = %+v", c, cond)
			}
		}
		if len(s.ContainerStatuses) != 1 {
			t.Fatalf("container statuses %+v", s.ContainerStatuses)
		}
		if cs := s.ContainerStatuses[0]; cs.Name != "app" || cs.Image != "registry.example/app:1" || cs.ImageID != digestOf(cs.Image) || !cs.Ready ||
			cs.Started == nil || !*cs.Started || cs.State.Running == nil || cs.RestartCount != 0 || cs.ContainerID == "" {
			t.Errorf("container status %+v", cs)
		}

		// A pod on the host's network has the host's IP; init containers ran, sidecars
		// run. Their images are pulled, the app's is on disk already.
		daemon := pc.bind("daemon", nodeName, func(pod *corev1.Pod) {
			pod.Spec.HostNetwork = true
			pod.Spec.InitContainers = []corev1.Container{
				{Name: "setup", Image: "registry.example/setup:1"},
				{Name: "proxy", Image: "registry.example/proxy:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			}
		})
		// Waiting for them, it is not initialized, and the app's image ID shows already.
		pc.waitPod(daemon, "pulling its init containers' images", func(pod *corev1.Pod) bool {
			initialized := podCondition(pod, corev1.PodInitialized)
			return initialized != nil && initialized.Status == corev1.ConditionFalse && initialized.Reason == reasonContainersNotInitialized &&
				waitingReason(pod, "setup") == reasonContainerCreating && !hasImageID(pod, "setup") && hasImageID(pod, "app")
		})
		pc.clk.Step(2*p.ImagePullDelay + p.ContainerStartDelay)
		ds := pc.waitPod(daemon, "Running and Ready", isRunningAndReady)
		if ds.Status.PodIP != privateIP {
			t.Errorf("host network pod IP %s, want %s", ds.Status.PodIP, privateIP)
		}
		if init := ds.Status.InitContainerStatuses; len(init) != 2 || init[0].State.Terminated == nil || init[0].State.Terminated.Reason != "Completed" ||
			init[1].State.Running == nil || !init[1].Ready {
			t.Errorf("init container statuses %+v", init)
		}

		// A running, Ready pod is not written again, nor tried. The pod's own count is read:
		// the daemon's last write may yet be followed by one tried on a cache that lags it,
		// refused for its stale version (seen in a fresh-clone CI run when all pods counted).
		writes := pc.writesTo(key)
		if rv := pc.settle(key); pc.pod(key).ResourceVersion != rv {
			t.Errorf("a Running and Ready pod was written again")
		}
		if got := pc.writesTo(key); got != writes {
			t.Errorf("%d more status writes tried for the running pod", got-writes)
		}
	})

	t.Run("once the Node is Ready", func(t *testing.T) {
		pc.t = t
		inst := create(t, pc.cloud, request("late"))
		nodeName := view(pc.t, pc.cloud, inst.ID).NodeName
		key := pc.bind("early", nodeName)

		pc.clk.Step(p.LaunchDelay + p.BootDelay)
		pc.waitNode(nodeName, "registered", func(n *corev1.Node) bool { return ready(n).Message == messageNetworkNotReady })
		pc.settle(key)
		if pod := pc.pod(key); pod.Status.Phase != corev1.PodPending {
			t.Fatalf("on a Node not Ready: phase %s", pod.Status.Phase)
		}
		// Bound long before the Node is Ready: the pull and the delay count from Ready.
		pc.clk.Step(p.ReadyDelay)
		pc.waitNode(nodeName, "Ready", func(n *corev1.Node) bool { return ready(n).Status == corev1.ConditionTrue })
		pc.clk.Step(p.ImagePullDelay + p.ContainerStartDelay - tick)
		pc.settle(key)
		if pod := pc.pod(key); pod.Status.Phase != corev1.PodPending {
			t.Fatalf("before the delay after Ready: phase %s", pod.Status.Phase)
		}
		pc.clk.Step(tick)
		pc.waitPod(key, "Running and Ready", isRunningAndReady)
	})

	t.Run("not Ready while the instance is stopped", func(t *testing.T) {
		pc.t = t
		inst, nodeName := pc.readyNode("stops")
		key := pc.bind("stateful", nodeName)
		pc.clk.Step(p.ImagePullDelay + p.ContainerStartDelay)
		first := pc.waitPod(key, "Running and Ready", isRunningAndReady)

		if err := pc.cloud.StopExternally(inst.ID); err != nil {
			t.Fatal(err)
		}
		notReady := func(pod *corev1.Pod) bool {
			return pod.Status.Phase == corev1.PodRunning && !conditionTrue(pod, corev1.PodReady) && !conditionTrue(pod, corev1.ContainersReady)
		}
		pc.waitPod(key, "not Ready on a stopping instance", notReady)
		pc.clk.Step(p.StopDelay)
		pc.settle(key)
		if pod := pc.pod(key); !notReady(pod) {
			t.Fatalf("on a stopped instance: phase %s, conditions %v", pod.Status.Phase, pod.Status.Conditions)
		}

		if err := pc.cloud.StartExternally(inst.ID); err != nil {
			t.Fatal(err)
		}
		pc.clk.Step(p.StartDelay + p.ResumeDelay)
		pc.waitNode(nodeName, "Ready again", func(n *corev1.Node) bool { return ready(n).Status == corev1.ConditionTrue })
		// The image stayed on disk: the containers start again without a pull.
		pc.clk.Step(p.ContainerStartDelay - tick)
		pc.settle(key)
		if pod := pc.pod(key); !notReady(pod) {
			t.Fatalf("before the delay after a start: phase %s, conditions %v", pod.Status.Phase, pod.Status.Conditions)
		}
		pc.clk.Step(tick)
		again := pc.waitPod(key, "Ready again", isRunningAndReady)
		if cs := again.Status.ContainerStatuses[0]; cs.RestartCount != 1 || cs.ContainerID == first.Status.ContainerStatuses[0].ContainerID {
			t.Errorf("after a restart: container status %+v", cs)
		}
		if again.Status.PodIP != first.Status.PodIP || !again.Status.StartTime.Equal(first.Status.StartTime) {
			t.Errorf("the pod's IP or start time changed: %s %v, was %s %v", again.Status.PodIP, again.Status.StartTime, first.Status.PodIP, first.Status.StartTime)
		}
	})

	t.Run("deletion", func(t *testing.T) {
		pc.t = t
		inst, nodeName := pc.readyNode("deletes")
		running := pc.bind("running", nodeName)
		stuck := pc.bind("stuck", nodeName)
		pc.clk.Step(p.ImagePullDelay + p.ContainerStartDelay)
		pc.waitPod(running, "Running", isRunningAndReady)

		gone := func(key types.NamespacedName) {
			t.Helper()
			eventually(t, key.Name+" gone", func(ctx context.Context) (bool, error) {
				err := pc.env.Client.Get(ctx, key, &corev1.Pod{})
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			})
		}
		if err := pc.env.Client.Delete(context.Background(), pc.pod(running)); err != nil {
			t.Fatal(err)
		}
		gone(running)

		// On a stopped instance nothing confirms the deletion, until the instance runs.
		if err := pc.cloud.StopExternally(inst.ID); err != nil {
			t.Fatal(err)
		}
		pc.clk.Step(p.StopDelay)
		wantState(t, pc.cloud, inst.ID, cloudprovider.StateStopped)
		if err := pc.env.Client.Delete(context.Background(), pc.pod(stuck)); err != nil {
			t.Fatal(err)
		}
		pc.settle(stuck)
		if pod := pc.pod(stuck); pod.DeletionTimestamp.IsZero() {
			t.Fatal("the pod is not terminating")
		}
		if err := pc.cloud.StartExternally(inst.ID); err != nil {
			t.Fatal(err)
		}
		pc.clk.Step(p.StartDelay)
		gone(stuck)
	})
}

// Many pods over many Nodes all run, with one status write each.
func TestKubeletRunsManyPods(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 pods")
	}
	const nodes, perNode = 100, 10
	// The test counts writes, not their speed: a thousand pods' writes take seconds on a
	// busy 2-core machine (13 s beside a CPU burner), so its waits allow a minute.
	eventually := func(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		simtest.EventuallyWithin(t, time.Minute, what, cond)
	}
	pc := startPodCluster(t, 0)
	p := pc.cloud.Physics()
	var names []string
	for n := range nodes {
		inst := create(t, pc.cloud, request(fmt.Sprintf("node-%d", n)))
		names = append(names, view(pc.t, pc.cloud, inst.ID).NodeName)
	}
	pc.clk.Step(p.LaunchDelay + p.BootDelay + p.ReadyDelay)
	eventually(t, "every Node Ready", func(ctx context.Context) (bool, error) {
		list := &corev1.NodeList{}
		if err := pc.env.Client.List(ctx, list); err != nil {
			return false, err
		}
		n := 0
		for _, node := range list.Items {
			if ready(&node).Status == corev1.ConditionTrue {
				n++
			}
		}
		return n == nodes, nil
	})

	started := time.Now()
	workqueue.ParallelizeUntil(context.Background(), 32, nodes*perNode, func(n int) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)},
			Spec: corev1.PodSpec{
				NodeName:   names[n%nodes],
				Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
			},
		}
		if err := pc.env.Client.Create(context.Background(), pod); err != nil {
			t.Error(err)
		}
	})
	eventually(t, "every pod seen", func(context.Context) (bool, error) {
		pc.pods.mu.Lock()
		defer pc.pods.mu.Unlock()
		return len(pc.pods.pods) == nodes*perNode, nil
	})
	t.Logf("created and seen in %s", time.Since(started).Round(time.Millisecond))
	// Each Node pulls the image once for its pods: each pod is written pulling, then
	// running.
	eventually(t, "a status write per pod, pulling", func(context.Context) (bool, error) {
		return pc.statusWrites.Load() >= nodes*perNode, nil
	})
	pc.clk.Step(p.ImagePullDelay + p.ContainerStartDelay)
	// Listing a thousand pods every poll would slow the API server down: count writes.
	eventually(t, "a second status write per pod, running", func(context.Context) (bool, error) {
		return pc.statusWrites.Load() >= 2*nodes*perNode, nil
	})
	eventually(t, "every pod Running", func(ctx context.Context) (bool, error) {
		list := &corev1.PodList{}
		if err := pc.env.Client.List(ctx, list); err != nil {
			return false, err
		}
		n := 0
		for _, pod := range list.Items {
			if isRunningAndReady(&pod) {
				n++
			}
		}
		if n != nodes*perNode {
			return false, fmt.Errorf("%d of %d pods run", n, nodes*perNode)
		}
		return true, nil
	})
	t.Logf("%d pods on %d Nodes ran in %s with %d status writes", nodes*perNode, nodes, time.Since(started).Round(time.Millisecond), pc.statusWrites.Load())
	if got := pc.statusWrites.Load(); got > 2*nodes*perNode*11/10 {
		t.Errorf("%d status writes for %d pods", got, nodes*perNode)
	}
}

func TestContainerStartDelayDraw(t *testing.T) {
	physics := physics.DefaultPhysics()
	c, _ := newCloud(t, fakecloud.Options{Physics: physics, TimeScale: 2, Seed: 3})
	inst := create(t, c, request("a"))
	name := view(t, c, inst.ID).NodeName
	delay := func(pod string) time.Duration {
		_, host, ok := c.PodHost(name, pod)
		if !ok {
			t.Fatal("no host")
		}
		return host.StartDelay
	}
	low, high := time.Hour, time.Duration(0)
	for n := range 200 {
		d := delay(fmt.Sprintf("default/pod-%d", n))
		low, high = min(low, d), max(high, d)
		if again := delay(fmt.Sprintf("default/pod-%d", n)); again != d {
			t.Fatalf("pod-%d: %s then %s", n, d, again)
		}
	}
	// 2 s with 10 % jitter at time scale 2.
	if low < 900*time.Millisecond || high > 1100*time.Millisecond || high-low < 100*time.Millisecond {
		t.Errorf("delays spread over [%s, %s]", low, high)
	}
	if _, _, ok := c.PodHost("elsewhere", "default/pod"); ok {
		t.Error("a Node the cloud does not know has a host")
	}
}
