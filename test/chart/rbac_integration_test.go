package chart_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/operator"
	"github.com/stratos-sh/stratos/internal/scheme"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/stack"
)

// requestLog records every API request a client made and its answer's status.
type requestLog struct {
	mu       sync.Mutex
	requests []string // "METHOD /path STATUS"
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			l.mu.Lock()
			l.requests = append(l.requests, fmt.Sprintf("%s %s %d", req.Method, req.URL.Path, resp.StatusCode))
			l.mu.Unlock()
		}
		return resp, err
	})
}

// matching returns the recorded requests that match a pattern.
func (l *requestLog) matching(pattern string) []string {
	re := regexp.MustCompile(pattern)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.requests {
		if re.MatchString(r) {
			out = append(out, r)
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// impersonating is the admin's config acting as user, with its requests logged.
func impersonating(env *harness.Env, user string, log *requestLog) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	cfg.WrapTransport = log.wrap
	return cfg
}

// applyObjects creates objects for real as the administrator.
func applyObjects(ctx context.Context, t testing.TB, c client.Client, objects []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objects {
		if err := c.Create(ctx, obj.DeepCopy()); err != nil {
			t.Fatalf("creating %s: %v", describe(obj), err)
		}
	}
}

// The operator, run from the chart's rendered arguments as the chart's ServiceAccount
// bound to the chart's roles only, resolves a CapacityBuffer of a Deployment, warms a
// standby node (its pre-pull pod included), reports pods its paused pool cannot take,
// starts the node for them once the pool resumes, reserving it to them, and, once the
// pods are gone, stops it back to standby, with no request refused. The fake cloud runs in another process's stead (its kubelets
// impersonate an identity bound to the chart's stratos-fake-kubelets roles), so the
// operator's own permissions are all it has, under the chart's pod-patch policy. The
// API server enforces owner references' permissions (OwnerReferencesPermissionEnforcement)
// as some clusters do: the claims the pool creates block its deletion.
func TestOperatorRunsWithTheChartsRoles(t *testing.T) {
	env := harness.StartWithT(t, harness.Options{WithoutCRDs: true, AdmissionPlugins: []string{ownerReferencesPlugin}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin := adminClient(t, env)

	cloud := fakecloud.New(fakecloud.Options{TimeScale: 40, Seed: 1})
	cloudServer := httptest.NewServer(fakecloud.NewServer(cloud))
	t.Cleanup(cloudServer.Close)

	// The chart as an installation renders it, with the fake cloud served elsewhere.
	objects := render(t, valuesFile(t, map[string]any{
		"settings": map[string]any{"clusterName": "test", "cloudProvider": "fake"},
		"fake":     map[string]any{"endpoint": cloudServer.URL},
	}))
	for _, crd := range ofKind(objects, "CustomResourceDefinition") {
		installCRD(ctx, t, admin, crd)
	}
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNamespace}}); err != nil {
		t.Fatal(err)
	}
	var rbac []*unstructured.Unstructured
	// The roles, and the policy that holds the operator's pod patches to reservations.
	for _, kind := range append([]string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, podPatchPolicyKinds...) {
		rbac = append(rbac, ofKind(objects, kind)...)
	}
	applyObjects(ctx, t, admin, rbac)

	// The kubelets' roles as the chart renders them for the in-process fake cloud, bound
	// to an identity of their own.
	const kubeletUser = "stratos-test-fake-kubelets"
	inProcess := render(t, valuesFile(t, map[string]any{"settings": map[string]any{"clusterName": "test", "cloudProvider": "fake"}}))
	for _, obj := range append(ofKind(inProcess, "ClusterRole"), append(ofKind(inProcess, "Role"), append(ofKind(inProcess, "ClusterRoleBinding"), ofKind(inProcess, "RoleBinding")...)...)...) {
		if obj.GetName() != "stratos-fake-kubelets" {
			continue
		}
		if obj.GetKind() == "ClusterRoleBinding" || obj.GetKind() == "RoleBinding" {
			subjects := []any{map[string]any{"kind": rbacv1.UserKind, "apiGroup": rbacv1.GroupName, "name": kubeletUser}}
			if err := unstructured.SetNestedSlice(obj.Object, subjects, "subjects"); err != nil {
				t.Fatal(err)
			}
		}
		applyObjects(ctx, t, admin, []*unstructured.Unstructured{obj})
	}
	kubeletLog := &requestLog{}
	startKubelets(t, cloud, impersonating(env, kubeletUser, kubeletLog))

	// The operator, from the Deployment's arguments, as its ServiceAccount.
	container := deployment(t, objects).Spec.Template.Spec.Containers[0]
	opts, err := operator.Parse(container.Args, envLookup(container.Env))
	if err != nil {
		t.Fatalf("the operator refuses the rendered arguments: %v", err)
	}
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0" // no ports in a test
	operatorLog := &requestLog{}
	serviceAccount := fmt.Sprintf("system:serviceaccount:%s:%s", releaseNamespace, deployment(t, objects).Spec.Template.Spec.ServiceAccountName)
	// operator.New names its controllers as the binary does; controller-runtime allows each
	// name once per process unless told otherwise, and go test -count runs this again.
	op, err := operator.New(ctx, opts, impersonating(env, serviceAccount, operatorLog), stack.TestLogger(t),
		func(o *manager.Options) { o.Controller.SkipNameValidation = ptr.To(true) })
	if err != nil {
		t.Fatal(err)
	}
	opCtx, stopOperator := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- op.Start(opCtx) }()
	t.Cleanup(func() {
		stopOperator()
		if err := <-stopped; err != nil {
			t.Errorf("operator: %v", err)
		}
	})

	// A warm pool of one node that pre-pulls an image, and quick to give nodes back.
	if err := admin.Create(ctx, &v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	pool := &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1beta1.NodePoolSpec{
			Template:   v1beta1.NodeClaimTemplate{Spec: v1beta1.NodeClaimTemplateSpec{NodeClassRef: v1beta1.NodeClassReference{Kind: "FakeNodeClass", Name: "default"}}},
			Standby:    v1beta1.Standby{Min: 1, Max: ptr.To[int32](3), Warmup: v1beta1.Warmup{Images: []string{"registry.example/app:1"}}},
			Disruption: v1beta1.Disruption{ConsolidateAfter: &v1beta1.Duration{Duration: time.Second}},
		},
	}
	if err := admin.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	standby := waitForClaim(ctx, t, admin, "a warm standby node", func(c *v1beta1.NodeClaim) bool { return c.Status.Phase == v1beta1.PhaseStandby }, operatorLog, kubeletLog)

	// Two pods that fit nowhere start it, of different sizes so that the decision reserves
	// the claim and the operator patches them, under the chart's pod-patch policy.
	pods := podsDecidedTogether(ctx, t, admin, pool.Name, map[string]string{"app": "100m", "app-large": "200m"})
	running := waitForClaim(ctx, t, admin, "the standby node running for the pods", func(c *v1beta1.NodeClaim) bool {
		return c.Name == standby.Name && c.Status.Phase == v1beta1.PhaseRunning
	}, operatorLog, kubeletLog)
	for _, pod := range pods {
		waitForReservation(ctx, t, admin, pod)
	}

	// Without the pods the node is empty, and goes back to standby: the same instance.
	for _, pod := range pods {
		if err := admin.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	back := waitForClaim(ctx, t, admin, "the node back in standby", func(c *v1beta1.NodeClaim) bool {
		return c.Name == running.Name && c.Status.Phase == v1beta1.PhaseStandby && c.Spec.DesiredState == v1beta1.DesiredStandby
	}, operatorLog, kubeletLog)
	if back.Status.InstanceID != standby.Status.InstanceID {
		t.Errorf("the claim came back on instance %s, not %s", back.Status.InstanceID, standby.Status.InstanceID)
	}

	// A buffer of 50% of a Deployment resolves: the operator reads the Deployment, makes
	// the buffer's PodTemplate (owned by the buffer, which the owner-references plugin
	// allows only with capacitybuffers/finalizers) and writes the buffer's status.
	resolveBuffer(ctx, t, admin)

	// Nothing was refused, and the namespaced and cluster-wide permissions were used.
	if refused := operatorLog.matching(` 403$`); len(refused) > 0 {
		t.Errorf("the operator's requests were refused:\n%v", refused)
	}
	if refused := kubeletLog.matching(` 403$`); len(refused) > 0 {
		t.Errorf("the fake kubelets' requests were refused:\n%v", refused)
	}
	for what, pattern := range map[string]string{
		"the leader-election Lease":                 `^(POST|PUT) /apis/coordination\.k8s\.io/v1/namespaces/stratos/leases.* 20[01]$`,
		"a pre-pull pod in the release's namespace": `^POST /api/v1/namespaces/stratos/pods 201$`,
		"a NodeClaim":                     `^POST /apis/stratos\.sh/v1beta1/nodeclaims 201$`,
		"the pod's reservation":           `^PATCH /api/v1/namespaces/default/pods/app 200$`,
		"a Node patch":                    `^PATCH /api/v1/nodes/[^/]+ 200$`,
		"a NodeClaim status patch":        `^PATCH /apis/stratos\.sh/v1beta1/nodeclaims/[^/]+/status 200$`,
		"the NodePool status":             `^PUT /apis/stratos\.sh/v1beta1/nodepools/web/status 200$`,
		"an Event":                        `^(POST|PATCH) /apis/events\.k8s\.io/v1/namespaces/[^/]+/events.* 20[01]$`,
		"a read of a buffer's Deployment": `^GET /apis/apps/v1/namespaces/default/deployments/web 200$`,
		"a buffer's PodTemplate":          `^POST /api/v1/namespaces/default/podtemplates 201$`,
		"a buffer's status":               `^PATCH /apis/autoscaling\.x-k8s\.io/v1beta1/namespaces/default/capacitybuffers/web/status 200$`,
		// Pod scope auto looked for another autoscaler, and was answered, not refused.
		"a look for Karpenter NodePools":                   `^GET /apis/karpenter\.sh/v1/nodepools 404$`,
		"a look for Cluster Autoscaler's status ConfigMap": `^GET /api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status 404$`,
	} {
		if len(operatorLog.matching(pattern)) == 0 {
			t.Errorf("the operator never wrote %s (%s)", what, pattern)
		}
	}
	if len(kubeletLog.matching(`^POST /api/v1/nodes 201$`)) == 0 {
		t.Errorf("the fake kubelets never registered a Node")
	}
	if len(operatorLog.matching(`^POST /api/v1/nodes `)) > 0 {
		t.Errorf("the operator tried to create a Node")
	}
	lease := &coordinationv1.Lease{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: opts.LeaderElectionID}, lease); err != nil || lease.Spec.HolderIdentity == nil {
		t.Errorf("no leader holds Lease %s/%s: %v", releaseNamespace, opts.LeaderElectionID, err)
	}
	events := &eventsv1.EventList{}
	if err := admin.List(ctx, events); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool { return e.Regarding.Name == standby.Name }) {
		t.Errorf("no Event about claim %s", standby.Name)
	}
}

// resolveBuffer creates a Deployment of two replicas and a buffer of half of it, and
// waits until the buffer resolves to one chunk.
func resolveBuffer(ctx context.Context, t *testing.T, admin client.Client) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}}}}}
	if err := admin.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	buffer := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: "Deployment", Name: "web"}, Percentage: ptr.To[int32](50)}}
	if err := admin.Create(ctx, buffer); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(buffer), buffer); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(buffer.Status.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning) &&
			ptr.Deref(buffer.Status.Replicas, 0) == 1, nil
	})
	if err != nil {
		t.Fatalf("waiting for the buffer to resolve: %v; its status: %+v", err, buffer.Status)
	}
}

// startKubelets runs the fake cloud's kubelets with cfg, until the test ends.
func startKubelets(t *testing.T, cloud *fakecloud.Cloud, cfg *rest.Config) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Logger:                 stack.TestLogger(t),
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := kubelet.NewKubelet(cloud, direct, kubelet.KubeletOptions{}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("kubelets: %v", err)
		}
	})
}

// waitForClaim polls the claims until one satisfies cond, for up to two minutes; on
// timeout it says which requests of the logs were refused.
func waitForClaim(ctx context.Context, t *testing.T, c client.Client, what string, cond func(*v1beta1.NodeClaim) bool, logs ...*requestLog) *v1beta1.NodeClaim {
	t.Helper()
	var found *v1beta1.NodeClaim
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		claims := &v1beta1.NodeClaimList{}
		if err := c.List(ctx, claims); err != nil {
			return false, err
		}
		for i := range claims.Items {
			if cond(&claims.Items[i]) {
				found = &claims.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		var refused []string
		for _, l := range logs {
			refused = append(refused, l.matching(` 403$`)...)
		}
		t.Fatalf("waiting for %s: %v; refused requests: %v", what, err, refused)
	}
	return found
}
