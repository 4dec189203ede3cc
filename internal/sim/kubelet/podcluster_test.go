package kubelet

import (
	"context"
	"github.com/go-logr/logr/testr"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
	"github.com/stratos-sh/stratos/test/harness"
)

func init() {
	// The managers of these tests have their own loggers; this silences the global one,
	// which the Node loop falls back to.
	logf.SetLogger(logr.Discard())
}

// podCluster is a fake cloud whose kubelets run in a manager against a real API server,
// pods included.
type podCluster struct {
	t     *testing.T
	env   *harness.Env
	cloud *fakecloud.Cloud
	clk   *testingclock.FakeClock
	pods  *podSyncer
	// statusWrites counts the kubelets' writes of pod status (tried: a write refused for a
	// stale version counts too); writesByPod counts them pod by pod.
	statusWrites atomic.Int64
	writesMu     sync.Mutex
	writesByPod  map[types.NamespacedName]int
}

// writesTo is how many status writes the kubelets have tried on the pod.
func (pc *podCluster) writesTo(key types.NamespacedName) int {
	pc.writesMu.Lock()
	defer pc.writesMu.Unlock()
	return pc.writesByPod[key]
}

func startPodCluster(t *testing.T, verbosity int) *podCluster {
	t.Helper()
	env := harness.StartT(t)
	c, clk := newCloud(t, fakecloud.Options{})
	pc := &podCluster{t: t, env: env, cloud: c, clk: clk, writesByPod: map[types.NamespacedName]int{}}
	mgr := simtest.NewManager(t, env.Config, env.Scheme, testr.NewWithOptions(t, testr.Options{Verbosity: verbosity}))
	direct, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	counted := interceptor.NewClient(direct, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*corev1.Pod); ok && sub == "status" {
				pc.statusWrites.Add(1)
				pc.writesMu.Lock()
				pc.writesByPod[client.ObjectKeyFromObject(obj)]++
				pc.writesMu.Unlock()
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	pc.pods, err = NewKubelet(c, counted, KubeletOptions{HeartbeatInterval: time.Second}).setupWithManager(mgr)
	if err != nil {
		t.Fatal(err)
	}
	simtest.RunManager(t, mgr)
	return pc
}

// readyNode launches an instance and steps the clock until its Node is Ready.
func (pc *podCluster) readyNode(token string) (*cloudprovider.Instance, string) {
	pc.t.Helper()
	return pc.readyNodeFor(request(token))
}

// readyNodeFor launches an instance of req and steps the clock until its Node is Ready.
func (pc *podCluster) readyNodeFor(req *cloudprovider.CreateRequest) (*cloudprovider.Instance, string) {
	pc.t.Helper()
	inst := create(pc.t, pc.cloud, req)
	p := pc.cloud.Physics()
	pc.clk.Step(p.LaunchDelay + p.BootDelay + p.ReadyDelay)
	name := view(pc.t, pc.cloud, inst.ID).NodeName
	pc.waitNode(name, "Ready", func(n *corev1.Node) bool { return ready(n).Status == corev1.ConditionTrue })
	return inst, name
}

func (pc *podCluster) waitNode(name, what string, cond func(*corev1.Node) bool) {
	pc.t.Helper()
	eventually(pc.t, "the Node "+what, func(ctx context.Context) (bool, error) {
		node := &corev1.Node{}
		err := pc.env.Client.Get(ctx, client.ObjectKey{Name: name}, node)
		return err == nil && cond(node), err
	})
}

// bind creates a pod bound to nodeName and waits until a kubelet has seen it.
func (pc *podCluster) bind(name, nodeName string, mutate ...func(*corev1.Pod)) types.NamespacedName {
	pc.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{
			NodeName:   nodeName,
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
		},
	}
	for _, m := range mutate {
		m(pod)
	}
	if err := pc.env.Client.Create(context.Background(), pod); err != nil {
		pc.t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(pod)
	eventually(pc.t, "the kubelet seeing "+name, func(context.Context) (bool, error) {
		_, ok := pc.pods.lookup(key)
		return ok, nil
	})
	return key
}

func (pc *podCluster) pod(key types.NamespacedName) *corev1.Pod {
	pc.t.Helper()
	pod := &corev1.Pod{}
	if err := pc.env.Client.Get(context.Background(), key, pod); err != nil {
		pc.t.Fatal(err)
	}
	return pod
}

func (pc *podCluster) waitPod(key types.NamespacedName, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	pc.t.Helper()
	pod := &corev1.Pod{}
	eventually(pc.t, key.Name+" "+what, func(ctx context.Context) (bool, error) {
		err := pc.env.Client.Get(ctx, key, pod)
		return err == nil && cond(pod), err
	})
	return pod
}

// settle makes the kubelets sync the pod at the clock's current time, by touching it,
// and waits for that sync to finish. It returns the pod's resource version after the
// touch.
func (pc *podCluster) settle(key types.NamespacedName) string {
	pc.t.Helper()
	pod := pc.pod(key)
	base := pod.DeepCopy()
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations["test.stratos.sh/touched"] = pc.clk.Now().Format(time.RFC3339Nano)
	if err := pc.env.Client.Patch(context.Background(), pod, client.MergeFrom(base)); err != nil {
		pc.t.Fatal(err)
	}
	now := pc.clk.Now()
	eventually(pc.t, "a sync of "+key.Name, func(context.Context) (bool, error) {
		rec, ok := pc.pods.lookup(key)
		return ok && rec.synced.Equal(now), nil
	})
	return pod.ResourceVersion
}

func isRunningAndReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && conditionTrue(pod, corev1.PodReady) && conditionTrue(pod, corev1.ContainersReady)
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for n := range pod.Status.Conditions {
		if pod.Status.Conditions[n].Type == t {
			return &pod.Status.Conditions[n]
		}
	}
	return nil
}
