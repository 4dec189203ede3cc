package chart_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/operator"
)

const nonDefaultValues = "testdata/nondefault-values.yaml"

// helm lint passes with the default values (plus the required cluster name) and with
// the non-default ones, in strict mode, which fails on warnings too.
func TestHelmLint(t *testing.T) {
	for name, values := range map[string]string{"defaults": minimal(t), "non-default": nonDefaultValues} {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, "lint", "--strict", repoPath(t, "charts", "stratos"), "--namespace", releaseNamespace, "--values", values)
			if err != nil {
				t.Fatalf("helm lint: %v\n%s", err, out)
			}
		})
	}
}

// kinds lists the kind and name (and namespace) of each object, sorted.
func kinds(objects []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objects {
		id := o.GetKind() + " " + o.GetName()
		if o.GetNamespace() != "" {
			id += " -n " + o.GetNamespace()
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// The default values install the CRDs, the operator with two replicas and everything it
// needs to run on EKS, the policy that holds its pod patches to reservations, and nothing
// optional.
func TestDefaultValuesRenderTheOperatorForEKS(t *testing.T) {
	objects := render(t, minimal(t))
	want := []string{
		"ClusterRole stratos", "ClusterRoleBinding stratos",
		"CustomResourceDefinition capacitybuffers.autoscaling.x-k8s.io",
		"CustomResourceDefinition clusterapinodeclasses.stratos.sh",
		"CustomResourceDefinition ec2nodeclasses.stratos.sh", "CustomResourceDefinition fakenodeclasses.stratos.sh",
		"CustomResourceDefinition nodeclaims.stratos.sh", "CustomResourceDefinition nodepooldemands.stratos.sh",
		"CustomResourceDefinition nodepools.stratos.sh",
		"Deployment stratos -n stratos", "PodDisruptionBudget stratos -n stratos",
		"Role stratos -n stratos", "Role stratos-autoscaler-status -n kube-system",
		"RoleBinding stratos -n stratos", "RoleBinding stratos-autoscaler-status -n kube-system",
		"Service stratos-metrics -n stratos", "ServiceAccount stratos -n stratos",
		"ValidatingAdmissionPolicy stratos-pod-patches", "ValidatingAdmissionPolicyBinding stratos-pod-patches",
	}
	if got := kinds(objects); !slices.Equal(got, want) {
		t.Fatalf("rendered objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, crd := range ofKind(objects, "CustomResourceDefinition") {
		if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s lacks helm.sh/resource-policy: keep; helm uninstall would delete every NodePool and NodeClaim", crd.GetName())
		}
	}

	d := deployment(t, objects)
	pod := d.Spec.Template.Spec
	if *d.Spec.Replicas != 2 || pod.PriorityClassName != "system-cluster-critical" {
		t.Errorf("replicas %d, priority class %q; want 2 and system-cluster-critical", *d.Spec.Replicas, pod.PriorityClassName)
	}
	c := pod.Containers[0]
	if c.Image != "ghcr.io/stratos-sh/stratos:v0.1.0" {
		t.Errorf("image %q, want the appVersion's tag", c.Image)
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.LivenessProbe.HTTPGet.Port.StrVal != "http-health" || containerPort(c, "http-health") != 8081 {
		t.Errorf("probes %+v / %+v do not ask /healthz and /readyz on the health port", c.LivenessProbe.HTTPGet, c.ReadinessProbe.HTTPGet)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want cpu and memory requests and a memory limit", c.Resources)
	}
	sc := c.SecurityContext
	if sc == nil || !*sc.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container security context %+v is not locked down", sc)
	}
	if !keepsOffManagedNodes(pod.Affinity) {
		t.Errorf("affinity %+v lets the operator run on nodes it manages (%s)", pod.Affinity, v1beta1.LabelNodePool)
	}
	var keys []string
	for _, tsc := range pod.TopologySpreadConstraints {
		keys = append(keys, tsc.TopologyKey)
		if tsc.LabelSelector == nil || tsc.LabelSelector.MatchLabels["app.kubernetes.io/instance"] != "stratos" {
			t.Errorf("spread over %s selects %v, not the operator's pods", tsc.TopologyKey, tsc.LabelSelector)
		}
	}
	if !slices.Equal(keys, []string{corev1.LabelTopologyZone, corev1.LabelHostname}) {
		t.Errorf("spread over %v, want zones and hostnames", keys)
	}
	pdb := convert[policyv1.PodDisruptionBudget](t, ofKind(objects, "PodDisruptionBudget")[0])
	if pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != intstr.FromInt32(1) {
		t.Errorf("PodDisruptionBudget allows %v unavailable, want 1", pdb.Spec.MaxUnavailable)
	}
	svc := convert[corev1.Service](t, ofKind(objects, "Service")[0])
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "http-metrics" || svc.Spec.Ports[0].TargetPort.StrVal != "http-metrics" {
		t.Errorf("metrics Service ports %+v, want one named http-metrics", svc.Spec.Ports)
	}
	if containerPort(c, "http-metrics") != 8080 {
		t.Errorf("the container does not expose http-metrics on 8080: %+v", c.Ports)
	}
}

// The non-default values render what they ask for: the fake kubelets' role, the IRSA
// annotation, the ServiceMonitor and dashboard, the extra arguments, environment and
// volumes, the pinned image, and Roles in the Lease's and pre-pull pods' namespaces.
func TestNonDefaultValuesRenderWhatTheyAskFor(t *testing.T) {
	objects := render(t, nonDefaultValues)
	for _, id := range []string{
		"ClusterRole stratos-fake-kubelets", "ClusterRoleBinding stratos-fake-kubelets",
		"Role stratos-fake-kubelets -n kube-node-lease", "RoleBinding stratos-fake-kubelets -n kube-node-lease",
		"Role stratos -n stratos", "Role stratos -n stratos-leases", "Role stratos -n stratos-prepull",
		"RoleBinding stratos -n stratos-leases", "RoleBinding stratos -n stratos-prepull",
		"ServiceMonitor stratos -n stratos", "PrometheusRule stratos -n stratos", "ConfigMap stratos-dashboard -n stratos",
		"ServiceAccount stratos-controller -n stratos",
	} {
		if !slices.Contains(kinds(objects), id) {
			t.Errorf("no %s among:\n%s", id, strings.Join(kinds(objects), "\n"))
		}
	}
	sa := ofKind(objects, "ServiceAccount")[0]
	if sa.GetAnnotations()["eks.amazonaws.com/role-arn"] != "arn:aws:iam::111122223333:role/StratosController-demo" {
		t.Errorf("ServiceAccount annotations %v lack the IRSA role", sa.GetAnnotations())
	}
	monitor := ofKind(objects, "ServiceMonitor")[0]
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "http-metrics" || endpoints[0].(map[string]any)["interval"] != "15s" {
		t.Errorf("ServiceMonitor endpoints %v, want http-metrics every 15s", endpoints)
	}
	if monitor.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels %v lack serviceMonitor.labels", monitor.GetLabels())
	}
	dashboard := ofKind(objects, "ConfigMap")[0]
	if dashboard.GetLabels()["grafana_dashboard"] != "1" || dashboard.GetAnnotations()["grafana_folder"] != "Stratos" {
		t.Errorf("dashboard ConfigMap labels %v, annotations %v", dashboard.GetLabels(), dashboard.GetAnnotations())
	}
	if _, found, _ := unstructured.NestedString(dashboard.Object, "data", "stratos.json"); !found {
		t.Errorf("the dashboard ConfigMap has no stratos.json")
	}

	d := deployment(t, objects)
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "registry.example.test/platform/stratos@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("image %s (%s), want the digest, pulled always", c.Image, c.ImagePullPolicy)
	}
	if pod.ServiceAccountName != "stratos-controller" || pod.ImagePullSecrets[0].Name != "regcred" || pod.PriorityClassName != "system-node-critical" {
		t.Errorf("pod spec service account %q, pull secrets %v, priority %q", pod.ServiceAccountName, pod.ImagePullSecrets, pod.PriorityClassName)
	}
	if !slices.Contains(c.Args, "--kube-api-qps=100") || len(c.Env) != 1 || len(c.VolumeMounts) != 1 || len(pod.Volumes) != 1 {
		t.Errorf("extra args %v, env %v, mounts %v, volumes %v not rendered", c.Args, c.Env, c.VolumeMounts, pod.Volumes)
	}
	opts := parseDeployment(t, objects)
	if opts.CloudProvider != operator.ProviderFake || opts.KubeAPIQPS != 100 || opts.KubernetesVersion != "1.33" ||
		opts.LeaderElectionNamespace != "stratos-leases" || opts.PrePullNamespace != "stratos-prepull" || opts.MetricsBindAddress != ":9090" {
		t.Errorf("parsed options %+v do not hold the values (extra args and env included)", *opts)
	}
	if containerPort(c, "http-metrics") != 9090 {
		t.Errorf("metrics port %+v, want 9090", c.Ports)
	}
}

// With the fake cloud served by another process, no kubelets run in the operator and
// the chart grants it no Node creation.
func TestRemoteFakeCloudGetsNoKubeletRole(t *testing.T) {
	objects := render(t, valuesFile(t, map[string]any{
		"settings": map[string]any{"clusterName": "demo", "cloudProvider": "fake"},
		"fake":     map[string]any{"endpoint": "http://stratos-sim:8090"},
	}))
	for _, id := range kinds(objects) {
		if strings.Contains(id, "fake-kubelets") {
			t.Errorf("rendered %s though the fake cloud runs elsewhere", id)
		}
	}
}

// Bad values fail at install with the schema's message, before anything renders.
func TestBadValuesFailWithTheSchemasMessage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"missing cluster name", map[string]any{}, "at '/settings/clusterName': minLength: got 0, want 1"},
		{"bad cluster name", map[string]any{"settings": map[string]any{"clusterName": "prod.1"}}, "at '/settings/clusterName': 'prod.1' does not match pattern"},
		{"unknown cloud", map[string]any{"settings": map[string]any{"clusterName": "demo", "cloudProvider": "gcp"}}, "at '/settings/cloudProvider': value must be one of 'aws', 'clusterapi', 'fake'"},
		{"bad log level", map[string]any{"settings": map[string]any{"clusterName": "demo"}, "logging": map[string]any{"level": "verbose"}}, "at '/logging/level': value must be one of 'debug', 'info', 'error'"},
		{"bad log format", map[string]any{"settings": map[string]any{"clusterName": "demo"}, "logging": map[string]any{"format": "xml"}}, "at '/logging/format': value must be one of 'json', 'text'"},
		{"misspelt setting", map[string]any{"settings": map[string]any{"clusterName": "demo", "clustername": "demo"}}, "at '/settings': additional properties 'clustername' not allowed"},
		{"misspelt top-level key", map[string]any{"settings": map[string]any{"clusterName": "demo"}, "replica": 3}, "at '': additional properties 'replica' not allowed"},
		{"duration without unit", map[string]any{"settings": map[string]any{"clusterName": "demo", "launchTimeout": "5"}}, "at '/settings/launchTimeout': '5' does not match pattern"},
		{"duration as a number", map[string]any{"leaderElection": map[string]any{"leaseDuration": 15}, "settings": map[string]any{"clusterName": "demo"}}, "at '/leaderElection/leaseDuration': got number, want string"},
		{"interruption queue as an ARN", map[string]any{"settings": map[string]any{"clusterName": "demo", "interruptionQueue": "arn:aws:sqs:eu-west-1:111122223333:stratos"}}, "at '/settings/interruptionQueue': 'arn:aws:sqs:eu-west-1:111122223333:stratos' does not match pattern"},
		// Only EC2 has an SQS queue; the operator would refuse the flag with the fake cloud.
		{"interruption queue with the fake cloud", map[string]any{"settings": map[string]any{"clusterName": "demo", "cloudProvider": "fake", "interruptionQueue": "stratos-demo"}}, "settings.interruptionQueue needs settings.cloudProvider aws"},
		{"port out of range", map[string]any{"settings": map[string]any{"clusterName": "demo"}, "metrics": map[string]any{"port": 70000}}, "at '/metrics/port': maximum: got 70,000, want 65,535"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderErr(t, valuesFile(t, tc.values))
			if err == nil {
				t.Fatal("helm template accepted the values")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("helm said %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// containerPort is the number of a named container port, 0 if none.
func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// keepsOffManagedNodes reports whether the affinity requires nodes without Stratos's pool
// label.
func keepsOffManagedNodes(a *corev1.Affinity) bool {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		found := false
		for _, e := range term.MatchExpressions {
			if e.Key == v1beta1.LabelNodePool && e.Operator == corev1.NodeSelectorOpDoesNotExist {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return len(terms) > 0
}
