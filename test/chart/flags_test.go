package chart_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/internal/operator"
)

// flagValue ties one operator flag to the chart value that sets it, with a value unlike
// the flag's default that the test sets and expects the operator to parse.
type flagValue struct {
	flag string
	// path is the value's key in values.yaml, dot-separated.
	path string
	// value is what the test sets; a string is given as it is, other types as YAML.
	value any
	// cloud is the cloud provider the flag belongs to ("" for every cloud): the chart
	// renders aws and fake flags only for their cloud.
	cloud string
}

// The chart's value of every operator flag, written here rather than read from the chart,
// so that a flag the chart forgets fails this test.
var flagValues = []flagValue{
	{flag: "cluster-name", path: "settings.clusterName", value: "prod-eu-1"},
	{flag: "cloud-provider", path: "settings.cloudProvider", value: "fake", cloud: "fake"},
	{flag: "kubeconfig", path: "settings.kubeconfig", value: "/etc/stratos/kubeconfig"},
	{flag: "kube-api-qps", path: "settings.kubeAPIQPS", value: 50.5},
	{flag: "kube-api-burst", path: "settings.kubeAPIBurst", value: 75},
	{flag: "batch-idle-duration", path: "settings.batchIdleDuration", value: "40ms"},
	{flag: "batch-max-duration", path: "settings.batchMaxDuration", value: "2s"},
	{flag: "launch-timeout", path: "settings.launchTimeout", value: "7m"},
	{flag: "registration-timeout", path: "settings.registrationTimeout", value: "20m"},
	{flag: "initialization-timeout", path: "settings.initializationTimeout", value: "12m"},
	{flag: "start-timeout", path: "settings.startTimeout", value: "4m"},
	{flag: "stop-timeout", path: "settings.stopTimeout", value: "12m"},
	{flag: "abandon-blocked-drain-after", path: "settings.abandonBlockedDrainAfter", value: "7m"},
	{flag: "gc-interval", path: "settings.gcInterval", value: "90s"},
	{flag: "gc-grace-period", path: "settings.gcGracePeriod", value: "3m"},
	{flag: "pool-max-creations-per-pass", path: "settings.poolMaxCreationsPerPass", value: 5},
	{flag: "pool-max-creations-per-minute", path: "settings.poolMaxCreationsPerMinute", value: 12},
	{flag: "warmup-failure-backoff", path: "settings.warmupFailureBackoff", value: "45s"},
	{flag: "warmup-failure-backoff-max", path: "settings.warmupFailureBackoffMax", value: "1h"},
	{flag: "unavailable-offering-ttl", path: "settings.unavailableOfferingTTL", value: "10m"},
	{flag: "graceful-shutdown-timeout", path: "settings.gracefulShutdownTimeout", value: "20s"},
	{flag: "kubernetes-version", path: "settings.kubernetesVersion", value: "1.33"},
	{flag: "prepull-namespace", path: "settings.prePullNamespace", value: "prepull"},
	{flag: "calendar-file", path: "settings.calendarFile", value: "/etc/stratos/calendar.json"},
	{flag: "pod-scope", path: "settings.podScope", value: "opted-in"},
	{flag: "cluster-autoscaler-status-configmap", path: "settings.clusterAutoscalerStatusConfigMap", value: "autoscaling/ca-status"},
	{flag: "leader-elect", path: "leaderElection.enabled", value: false},
	{flag: "leader-election-id", path: "leaderElection.id", value: "stratos-test"},
	{flag: "leader-election-namespace", path: "leaderElection.namespace", value: "leases"},
	{flag: "leader-election-lease-duration", path: "leaderElection.leaseDuration", value: "30s"},
	{flag: "leader-election-renew-deadline", path: "leaderElection.renewDeadline", value: "20s"},
	{flag: "leader-election-retry-period", path: "leaderElection.retryPeriod", value: "5s"},
	{flag: "metrics-bind-address", path: "metrics.port", value: 9090},
	{flag: "health-probe-bind-address", path: "health.port", value: 9091},
	{flag: "log-level", path: "logging.level", value: "debug"},
	{flag: "log-format", path: "logging.format", value: "text"},
	{flag: "aws-region", path: "aws.region", value: "eu-west-1", cloud: "aws"},
	{flag: "aws-endpoint", path: "aws.endpoint", value: "http://moto.test:5000", cloud: "aws"},
	{flag: "aws-ssm-parameter-root", path: "aws.ssmParameterRoot", value: "/test/service", cloud: "aws"},
	{flag: "cluster-endpoint", path: "aws.clusterEndpoint", value: "https://api.example.test", cloud: "aws"},
	{flag: "cluster-ca-file", path: "aws.clusterCAFile", value: "/etc/stratos/ca.pem", cloud: "aws"},
	{flag: "cluster-service-cidr", path: "aws.clusterServiceCIDR", value: "10.100.0.0/16", cloud: "aws"},
	{flag: "interruption-queue", path: "settings.interruptionQueue", value: "stratos-prod-eu-1", cloud: "aws"},
	{flag: "fake-time-scale", path: "fake.timeScale", value: 5, cloud: "fake"},
	{flag: "fake-seed", path: "fake.seed", value: 42, cloud: "fake"},
	{flag: "fake-cloud-endpoint", path: "fake.endpoint", value: "http://stratos-sim:8090", cloud: "fake"},
}

// flagsWithoutValue are operator flags the chart has no value for, and why.
var flagsWithoutValue = map[string]string{
	"version":            "prints the version and exits: not a setting of a running operator",
	"pprof-bind-address": "a profiling endpoint for the simulator's scale runs, off by default: an installed operator does not serve profiles",
}

// The chart has a value for every flag the operator's flag parser defines, present in
// values.yaml and described by values.schema.json.
func TestEveryOperatorFlagHasAValue(t *testing.T) {
	byFlag := map[string]flagValue{}
	for _, fv := range flagValues {
		byFlag[fv.flag] = fv
	}
	values := map[string]any{}
	readYAML(t, repoPath(t, "charts", "stratos", "values.yaml"), &values)
	schema := map[string]any{}
	readYAML(t, repoPath(t, "charts", "stratos", "values.schema.json"), &schema)

	operator.NewFlagSet(&operator.Options{}).VisitAll(func(f *flag.Flag) {
		if _, ok := flagsWithoutValue[f.Name]; ok {
			return
		}
		fv, ok := byFlag[f.Name]
		if !ok {
			t.Errorf("operator flag --%s has no chart value", f.Name)
			return
		}
		if _, ok := lookup(values, fv.path); !ok {
			t.Errorf("--%s: values.yaml has no %s", f.Name, fv.path)
		}
		if _, ok := schemaProperty(schema, fv.path); !ok {
			t.Errorf("--%s: values.schema.json does not describe %s", f.Name, fv.path)
		}
		delete(byFlag, f.Name)
	})
	for name := range byFlag {
		t.Errorf("the test maps --%s, which the operator does not define", name)
	}
}

// The Deployment rendered with the default values (and a cluster name) is an operator on
// AWS that the operator's own parser accepts, with the binary's defaults for every flag
// but the cluster, the cloud and the namespaces of its Lease and pre-pull pods.
func TestDefaultArgsParseAsAnAWSOperator(t *testing.T) {
	opts := parseDeployment(t, render(t, minimal(t)))
	if opts.ClusterName != "prod-eu-1" || opts.CloudProvider != operator.ProviderAWS {
		t.Errorf("cluster %q on %q, want prod-eu-1 on aws", opts.ClusterName, opts.CloudProvider)
	}
	if opts.LeaderElectionNamespace != releaseNamespace || opts.PrePullNamespace != releaseNamespace {
		t.Errorf("Lease in %q, pre-pull pods in %q; want both in the release's namespace %q", opts.LeaderElectionNamespace, opts.PrePullNamespace, releaseNamespace)
	}
	defaults := &operator.Options{}
	operator.NewFlagSet(defaults)
	defaults.ClusterName, defaults.CloudProvider = opts.ClusterName, opts.CloudProvider
	defaults.LeaderElectionNamespace, defaults.PrePullNamespace = opts.LeaderElectionNamespace, opts.PrePullNamespace
	if *opts != *defaults {
		t.Errorf("the default values change the binary's defaults:\n got %+v\nwant %+v", *opts, *defaults)
	}
}

// Each value, set unlike its default, reaches its flag: the rendered arguments, parsed by
// the operator's parser, hold the value. Two renderings cover the aws and fake flags.
func TestEachValueSetsItsFlag(t *testing.T) {
	for _, cloud := range []string{operator.ProviderAWS, operator.ProviderFake} {
		t.Run(cloud, func(t *testing.T) {
			values := map[string]any{}
			var checked []flagValue
			for _, fv := range flagValues {
				if fv.cloud == "" || fv.cloud == cloud {
					set(values, fv.path, fv.value)
					checked = append(checked, fv)
				}
			}
			set(values, "settings.cloudProvider", cloud)
			container := deployment(t, render(t, valuesFile(t, values))).Spec.Template.Spec.Containers[0]
			if _, err := operator.Parse(container.Args, envLookup(container.Env)); err != nil {
				t.Fatalf("the operator refuses the rendered arguments %q: %v", container.Args, err)
			}
			fs := operator.NewFlagSet(&operator.Options{})
			fs.SetOutput(io.Discard)
			if err := fs.Parse(container.Args); err != nil {
				t.Fatal(err)
			}
			for _, fv := range checked {
				want := operator.NewFlagSet(&operator.Options{})
				if err := want.Set(fv.flag, expectedFlagValue(fv)); err != nil {
					t.Fatalf("--%s=%v: %v", fv.flag, fv.value, err)
				}
				got, expected := fs.Lookup(fv.flag).Value.String(), want.Lookup(fv.flag).Value.String()
				if expected == fs.Lookup(fv.flag).DefValue {
					t.Errorf("--%s: the test's value %v is the flag's default; it proves nothing", fv.flag, fv.value)
				}
				if got != expected {
					t.Errorf("%s=%v gave --%s=%s, want %s", fv.path, fv.value, fv.flag, got, expected)
				}
			}
		})
	}
}

// expectedFlagValue is the flag argument a chart value stands for.
func expectedFlagValue(fv flagValue) string {
	switch fv.flag {
	case "metrics-bind-address", "health-probe-bind-address":
		return fmt.Sprintf(":%v", fv.value)
	}
	return fmt.Sprint(fv.value)
}

// parseDeployment parses the arguments and environment of the rendered operator
// container with the operator's parser and fails the test if it refuses them.
func parseDeployment(t testing.TB, objects []*unstructured.Unstructured) *operator.Options {
	t.Helper()
	container := deployment(t, objects).Spec.Template.Spec.Containers[0]
	opts, err := operator.Parse(container.Args, envLookup(container.Env))
	if err != nil {
		t.Fatalf("the operator refuses the rendered arguments %q: %v", container.Args, err)
	}
	return opts
}

// envLookup looks variables up in a container's literal environment only, not the test's.
func envLookup(env []corev1.EnvVar) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, e := range env {
			if e.Name == name && e.ValueFrom == nil {
				return e.Value, true
			}
		}
		return "", false
	}
}

// set sets a dot-separated path in nested maps.
func set(values map[string]any, path string, value any) {
	keys := strings.Split(path, ".")
	m := values
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}

// lookup reads a dot-separated path from nested maps.
func lookup(values map[string]any, path string) (any, bool) {
	var cur any = values
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// schemaProperty finds the schema of a dot-separated path through "properties".
func schemaProperty(schema map[string]any, path string) (map[string]any, bool) {
	cur := schema
	for _, k := range strings.Split(path, ".") {
		props, ok := cur["properties"].(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = props[k].(map[string]any); !ok {
			return nil, false
		}
	}
	return cur, true
}

func readYAML(t testing.TB, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Every value in values.yaml is described by values.schema.json with a type, down to the
// objects the schema leaves free-form (Kubernetes structures such as affinity).
func TestEveryValueIsInTheSchema(t *testing.T) {
	values := map[string]any{}
	readYAML(t, repoPath(t, "charts", "stratos", "values.yaml"), &values)
	schema := map[string]any{}
	readYAML(t, repoPath(t, "charts", "stratos", "values.schema.json"), &schema)
	var walk func(path string, value any, node map[string]any)
	walk = func(path string, value any, node map[string]any) {
		if _, typed := node["type"]; !typed {
			t.Errorf("%s: the schema gives no type", path)
		}
		children, isMap := value.(map[string]any)
		props, described := node["properties"].(map[string]any)
		if !isMap || !described {
			return // a leaf, or an object the schema leaves free-form
		}
		if node["additionalProperties"] != false {
			t.Errorf("%s: the schema lets unknown keys through (additionalProperties is not false)", path)
		}
		for key, child := range children {
			childNode, ok := props[key].(map[string]any)
			if !ok {
				t.Errorf("%s.%s: not in the schema", path, key)
				continue
			}
			walk(path+"."+key, child, childNode)
		}
	}
	walk("(values)", values, schema)
}
