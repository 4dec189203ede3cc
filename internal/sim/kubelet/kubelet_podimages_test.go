package kubelet

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// containerStatus returns the status of the pod's container name, init or not.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for n := range statuses {
			if statuses[n].Name == name {
				return &statuses[n]
			}
		}
	}
	return nil
}

// waitingReason is why the pod's container name waits; "" if it does not.
func waitingReason(pod *corev1.Pod, name string) string {
	if s := containerStatus(pod, name); s != nil && s.State.Waiting != nil {
		return s.State.Waiting.Reason
	}
	return ""
}

// hasImageID reports whether the pod's container name reports the ID of its image.
func hasImageID(pod *corev1.Pod, name string) bool {
	s := containerStatus(pod, name)
	return s != nil && s.ImageID != "" && s.ImageID == digestOf(s.Image)
}

func containers(images ...string) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		pod.Spec.Containers = nil
		for n, image := range images {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: string(rune('a' + n)), Image: image})
		}
	}
}

func nodeImages(node *corev1.Node) []string {
	var out []string
	for _, image := range node.Status.Images {
		out = append(out, image.Names[len(image.Names)-1])
	}
	return out
}

// Pods make the machine pull their images, one at a time in the order asked, and start
// once theirs are on disk; while they wait, their containers say so.
func TestKubeletPullsImagesForPods(t *testing.T) {
	pc := startPodCluster(t, 1)
	p := pc.cloud.Physics()

	t.Run("in order, one at a time", func(t *testing.T) {
		pc.t = t
		_, nodeName := pc.readyNode("order")
		first := pc.bind("first", nodeName, containers("one:1", "two:1"))
		pending := pc.waitPod(first, "pulling", func(pod *corev1.Pod) bool { return waitingReason(pod, "a") == reasonContainerCreating })
		if pending.Status.Phase != corev1.PodPending || podReady(pending) || hasImageID(pending, "a") || pending.Status.PodIP == "" {
			t.Errorf("pulling: phase %s, ready %v, statuses %+v, pod IP %q", pending.Status.Phase, podReady(pending), pending.Status.ContainerStatuses, pending.Status.PodIP)
		}
		second := pc.bind("second", nodeName, containers("two:1", "three:1"))
		pc.waitPod(second, "pulling", func(pod *corev1.Pod) bool { return waitingReason(pod, "b") == reasonContainerCreating })

		// one:1 lands first: its container reports its ID while the other still waits.
		pc.clk.Step(p.ImagePullDelay)
		pc.waitPod(first, "with one image", func(pod *corev1.Pod) bool {
			return hasImageID(pod, "a") && !hasImageID(pod, "b") && waitingReason(pod, "b") == reasonContainerCreating
		})
		// two:1 next, for both pods; the first starts after the start delay.
		pc.clk.Step(p.ImagePullDelay + p.ContainerStartDelay)
		pc.waitPod(first, "Running", isRunningAndReady)
		pc.waitPod(second, "with two:1", func(pod *corev1.Pod) bool { return hasImageID(pod, "a") && !hasImageID(pod, "b") })
		// three:1 last, after two:1: the second starts three pulls after the first asked.
		pc.clk.Step(p.ImagePullDelay - p.ContainerStartDelay)
		pc.clk.Step(p.ContainerStartDelay - tick)
		pc.settle(second)
		if pod := pc.pod(second); pod.Status.Phase != corev1.PodPending {
			t.Fatalf("the second pod runs before its last image and the start delay: %s", pod.Status.Phase)
		}
		pc.clk.Step(tick)
		pc.waitPod(second, "Running", isRunningAndReady)
		pc.waitNode(nodeName, "listing the images", func(n *corev1.Node) bool {
			return slices.Equal(nodeImages(n), []string{"one:1", "two:1", "three:1"})
		})

		// A pod whose image is on disk starts after the start delay alone.
		third := pc.bind("third", nodeName, containers("three:1"))
		pc.clk.Step(p.ContainerStartDelay - tick)
		pc.settle(third)
		if pod := pc.pod(third); pod.Status.Phase != corev1.PodPending || len(pod.Status.ContainerStatuses) != 0 {
			t.Fatalf("before the start delay: phase %s, statuses %+v", pod.Status.Phase, pod.Status.ContainerStatuses)
		}
		pc.clk.Step(tick)
		pc.waitPod(third, "Running", isRunningAndReady)
	})

	t.Run("ErrImagePull, then ImagePullBackOff", func(t *testing.T) {
		pc.t = t
		req := request("faulty")
		req.NodeClass = &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{ImagePullErrors: []string{"registry.example/missing:1"}}}}
		_, nodeName := pc.readyNodeFor(req)
		key := pc.bind("broken", nodeName, containers("registry.example/app:1", "registry.example/missing:1"))
		pc.waitPod(key, "pulling", func(pod *corev1.Pod) bool { return waitingReason(pod, "b") == reasonContainerCreating })

		pc.clk.Step(2 * p.ImagePullDelay)
		pod := pc.waitPod(key, "failing to pull", func(pod *corev1.Pod) bool { return waitingReason(pod, "b") == reasonErrImagePull })
		if msg := containerStatus(pod, "b").State.Waiting.Message; !strings.Contains(msg, `"registry.example/missing:1"`) {
			t.Errorf("ErrImagePull message %q does not name the image", msg)
		}
		if !hasImageID(pod, "a") || hasImageID(pod, "b") || waitingReason(pod, "a") != reasonContainerCreating || pod.Status.Phase != corev1.PodPending {
			t.Errorf("with one image failed: phase %s, statuses %+v", pod.Status.Phase, pod.Status.ContainerStatuses)
		}

		pc.clk.Step(imagePullBackOff)
		pod = pc.waitPod(key, "backing off", func(pod *corev1.Pod) bool { return waitingReason(pod, "b") == reasonImagePullBackOff })
		if msg := containerStatus(pod, "b").State.Waiting.Message; !strings.Contains(msg, `"registry.example/missing:1"`) {
			t.Errorf("ImagePullBackOff message %q does not name the image", msg)
		}
		pc.waitNode(nodeName, "listing the image that landed", func(n *corev1.Node) bool {
			return slices.Equal(nodeImages(n), []string{"registry.example/app:1"})
		})
		pc.settle(key)
		if pod := pc.pod(key); pod.Status.Phase != corev1.PodPending || podReady(pod) {
			t.Errorf("a pod with an image that never lands: phase %s, ready %v", pod.Status.Phase, podReady(pod))
		}
	})

	t.Run("a pull cut by a stop is pulled again", func(t *testing.T) {
		pc.t = t
		inst, nodeName := pc.readyNode("cut")
		key := pc.bind("cut", nodeName)
		pc.waitPod(key, "pulling", func(pod *corev1.Pod) bool { return waitingReason(pod, "app") == reasonContainerCreating })
		pc.clk.Step(p.ImagePullDelay / 2)
		if err := pc.cloud.StopExternally(inst.ID); err != nil {
			t.Fatal(err)
		}
		pc.clk.Step(p.StopDelay)
		if err := pc.cloud.StartExternally(inst.ID); err != nil {
			t.Fatal(err)
		}
		pc.clk.Step(p.StartDelay + p.ResumeDelay)
		pc.waitNode(nodeName, "Ready again", func(n *corev1.Node) bool { return ready(n).Status == corev1.ConditionTrue })
		pc.clk.Step(p.ImagePullDelay + p.ContainerStartDelay - tick)
		pc.settle(key)
		if pod := pc.pod(key); pod.Status.Phase != corev1.PodPending {
			t.Fatalf("running before a whole pull after the start: %s", pod.Status.Phase)
		}
		pc.clk.Step(tick)
		pc.waitPod(key, "Running", isRunningAndReady)
	})
}
