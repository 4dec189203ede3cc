package operator

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// env returns a lookup over a fixed set of variables.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

var required = []string{"--cluster-name=test", "--cloud-provider=fake"}

func TestHelpDocumentsEveryFlagWithItsVariable(t *testing.T) {
	fs := NewFlagSet(&Options{})
	var out bytes.Buffer
	PrintUsage(&out, fs)
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(out.String(), "--"+f.Name) || !strings.Contains(out.String(), EnvName(f.Name)) {
			t.Errorf("--help does not show --%s with %s", f.Name, EnvName(f.Name))
		}
		if f.Usage == "" {
			t.Errorf("--%s has no description", f.Name)
		}
	})
}

func TestOperationsGuideListsEveryFlag(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	NewFlagSet(&Options{}).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(string(doc), "`--"+f.Name+"`") {
			t.Errorf("docs/operations.md does not list --%s", f.Name)
		}
	})
}

func TestDefaults(t *testing.T) {
	opts, err := Parse(required, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !opts.LeaderElect || opts.KubeAPIQPS != 200 || opts.KubeAPIBurst != 300 || opts.MetricsBindAddress != ":8080" ||
		opts.HealthProbeBindAddress != ":8081" || opts.GracefulShutdownTimeout != 30*time.Second || opts.LogFormat != "json" ||
		opts.UnavailableOfferingTTL != 3*time.Minute {
		t.Fatalf("unexpected defaults: %+v", opts)
	}
	// Beside another autoscaler Stratos serves only opted-in pods unless told otherwise,
	// and looks for Cluster Autoscaler where it writes its status by default.
	controllers := opts.ControllerOptions()
	if controllers.PodScope != "auto" || controllers.ClusterAutoscalerStatus.String() != "kube-system/cluster-autoscaler-status" {
		t.Errorf("pod scope %q, status ConfigMap %s; want auto and kube-system/cluster-autoscaler-status", controllers.PodScope, controllers.ClusterAutoscalerStatus)
	}
}

func TestLifecycleTimeoutsReachTheNodeClaimController(t *testing.T) {
	opts, err := Parse(required, env(map[string]string{"STRATOS_START_TIMEOUT": "90s"}))
	if err != nil {
		t.Fatal(err)
	}
	claims := opts.ControllerOptions().NodeClaim
	if claims.InitializationTimeout != 10*time.Minute || claims.StartTimeout != 90*time.Second {
		t.Fatalf("initialization timeout %s, start timeout %s; want the default 10m and 90s from the environment", claims.InitializationTimeout, claims.StartTimeout)
	}
}

func TestTheBoundOnBlockedDrainsReachesDisruption(t *testing.T) {
	opts, err := Parse(append([]string{"--abandon-blocked-drain-after=2m"}, required...), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := opts.ControllerOptions().Disruption.AbandonDrainAfter; got != 2*time.Minute {
		t.Fatalf("disruption abandons blocked drains after %s, want 2m", got)
	}
	if opts, err = Parse(required, env(nil)); err != nil || opts.AbandonBlockedDrainAfter != disruption.DefaultAbandonDrainAfter {
		t.Fatalf("default %v (%v), want %s", opts, err, disruption.DefaultAbandonDrainAfter)
	}
}

func TestPrePullNamespaceReachesTheNodeClaimController(t *testing.T) {
	inPod := filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(inPod, []byte("stratos-system\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(saved string) { inClusterNamespaceFile = saved }(inClusterNamespaceFile)
	cases := []struct {
		args          []string
		namespaceFile string
		want          string
	}{
		{append([]string{"--prepull-namespace=stratos"}, required...), inPod, "stratos"},
		{required, inPod, "stratos-system"},
		{required, filepath.Join(t.TempDir(), "outside-a-pod"), "kube-system"},
	}
	for _, tc := range cases {
		inClusterNamespaceFile = tc.namespaceFile
		opts, err := Parse(tc.args, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := opts.ControllerOptions().NodeClaim.PrePullNamespace; got != tc.want {
			t.Errorf("%v with the namespace file %s: pre-pull namespace %q, want %q", tc.args, tc.namespaceFile, got, tc.want)
		}
	}
}

func TestEnvironmentFillsWhatTheCommandLineLeavesOut(t *testing.T) {
	opts, err := Parse([]string{"--cloud-provider=fake", "--kube-api-qps=50"}, env(map[string]string{
		"STRATOS_CLUSTER_NAME":   "from-env",
		"STRATOS_KUBE_API_QPS":   "10",
		"STRATOS_LEADER_ELECT":   "false",
		"STRATOS_CLOUD_PROVIDER": "aws",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if opts.ClusterName != "from-env" || opts.LeaderElect {
		t.Errorf("the environment was not applied: %+v", opts)
	}
	if opts.KubeAPIQPS != 50 || opts.CloudProvider != "fake" {
		t.Errorf("a flag must win over its variable: qps %v provider %q", opts.KubeAPIQPS, opts.CloudProvider)
	}
}

// The Cluster API provider needs nothing beyond the flags every cloud has.
func TestClusterAPIProvider(t *testing.T) {
	opts, err := Parse([]string{"--cluster-name=test", "--cloud-provider=clusterapi"}, env(nil))
	if err != nil || opts.CloudProvider != ProviderClusterAPI {
		t.Fatalf("Parse = %+v, %v; want the clusterapi provider", opts, err)
	}
}

func TestBadOptionsAreRejectedNamingTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--cloud-provider=fake"}, want: "--cluster-name is required"},
		{args: []string{"--cluster-name=test"}, want: "--cloud-provider is required"},
		{args: []string{"--cluster-name=prod.1", "--cloud-provider=fake"}, want: `--cluster-name "prod.1" must be`},
		{args: []string{"--cluster-name=test", "--cloud-provider=gcp"}, want: `--cloud-provider "gcp" is not fake, aws or clusterapi`},
		{args: append([]string{"--kube-api-qps=0"}, required...), want: "--kube-api-qps must be positive"},
		{args: append([]string{"--kube-api-burst=0"}, required...), want: "--kube-api-burst must be at least 1"},
		{args: append([]string{"--leader-election-renew-deadline=20s"}, required...), want: "must be shorter than --leader-election-lease-duration"},
		{args: append([]string{"--log-level=verbose"}, required...), want: `--log-level "verbose" is not debug, info or error`},
		{args: append([]string{"--log-format=xml"}, required...), want: `--log-format "xml" is not json or text`},
		{args: append([]string{"--fake-time-scale=-1"}, required...), want: "--fake-time-scale must be positive"},
		{args: append([]string{"--initialization-timeout=0s"}, required...), want: "--initialization-timeout must be positive"},
		{args: required, env: map[string]string{"STRATOS_START_TIMEOUT": "-1m"}, want: "--start-timeout must be positive"},
		{args: required, env: map[string]string{"STRATOS_ABANDON_BLOCKED_DRAIN_AFTER": "0s"}, want: "--abandon-blocked-drain-after must be positive"},
		{args: append([]string{"--unavailable-offering-ttl=0s"}, required...), want: "--unavailable-offering-ttl must be positive"},
		{args: append([]string{"--fake-cloud-endpoint=127.0.0.1:8090"}, required...), want: `--fake-cloud-endpoint "127.0.0.1:8090" must be an http:// or https:// URL`},
		{args: []string{"--cluster-name=test", "--cloud-provider=aws", "--fake-cloud-endpoint=http://127.0.0.1:8090"}, want: "--fake-cloud-endpoint needs --cloud-provider=fake"},
		{args: required, env: map[string]string{"STRATOS_KUBE_API_BURST": "lots"}, want: `STRATOS_KUBE_API_BURST="lots"`},
		{args: append([]string{"--prepull-namespace=Kube_System"}, required...), want: `--prepull-namespace "Kube_System" is not a namespace name`},
		{args: append([]string{"--pod-scope=opted_in"}, required...), want: `--pod-scope "opted_in" is not auto, all or opted-in`},
		{args: append([]string{"--cluster-autoscaler-status-configmap=cluster-autoscaler-status"}, required...), want: `must be namespace/name`},
		{args: append([]string{"--cluster-autoscaler-status-configmap=Kube/ca"}, required...), want: `names no namespace`},
		{args: append([]string{"--cluster-autoscaler-status-configmap=kube-system/"}, required...), want: `names no ConfigMap`},
		{args: []string{"--no-such-flag"}, want: "flag provided but not defined: -no-such-flag"},
		// The fake cloud has a queue of its own; a queue name there is a mistake.
		{args: append([]string{"--interruption-queue=stratos-test"}, required...), want: `--interruption-queue needs --cloud-provider=aws, not "fake"`},
		{args: []string{"--cluster-name=test", "--cloud-provider=aws", "--interruption-queue=arn:aws:sqs:us-east-1:111122223333:q"}, want: `--interruption-queue "arn:aws:sqs:us-east-1:111122223333:q" is an ARN; give the queue's name or URL`},
		{args: []string{"--cluster-name=test", "--cloud-provider=aws", "--interruption-queue=my queue"}, want: `--interruption-queue "my queue" is neither an SQS queue name`},
		{args: []string{"--cluster-name=test", "--cloud-provider=aws", "--interruption-queue=https://sqs.us-east-1.amazonaws.com/q"}, want: `is not a queue URL`},
		// On Cluster API the bootstrap template and the class say what EC2's flags say.
		{args: []string{"--cluster-name=test", "--cloud-provider=clusterapi", "--interruption-queue=stratos-test"}, want: `--interruption-queue needs --cloud-provider=aws, not "clusterapi"`},
		{args: []string{"--cluster-name=test", "--cloud-provider=clusterapi", "--aws-region=eu-west-1"}, want: `--aws-region needs --cloud-provider=aws, not "clusterapi"`},
		{args: []string{"--cluster-name=test", "--cloud-provider=clusterapi", "--fake-cloud-endpoint=http://127.0.0.1:8090"}, want: "--fake-cloud-endpoint needs --cloud-provider=fake"},
		{args: []string{"--cluster-name=test", "--cloud-provider=clusterapi", "--cluster-endpoint=https://10.0.0.1"}, want: "--cluster-endpoint does not apply to --cloud-provider=clusterapi"},
		{args: []string{"--cluster-name=test", "--cloud-provider=clusterapi", "--kubernetes-version=1.37"}, want: "--kubernetes-version does not apply to --cloud-provider=clusterapi"},
	}
	for _, tc := range cases {
		_, err := Parse(tc.args, env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%v, %v) = %v, want an error saying %q", tc.args, tc.env, err, tc.want)
		}
	}
}

// A queue is given by name or by URL; both are taken as they are.
func TestInterruptionQueueTakesANameOrAURL(t *testing.T) {
	for _, queue := range []string{"stratos-prod", "Stratos_prod-1", "https://sqs.eu-west-1.amazonaws.com/111122223333/stratos-prod"} {
		opts, err := Parse([]string{"--cluster-name=test", "--cloud-provider=aws", "--interruption-queue=" + queue}, env(nil))
		if err != nil {
			t.Errorf("--interruption-queue=%s: %v", queue, err)
			continue
		}
		if opts.InterruptionQueue != queue {
			t.Errorf("--interruption-queue=%s gave %q", queue, opts.InterruptionQueue)
		}
	}
}

func TestEveryProblemIsReportedAtOnce(t *testing.T) {
	_, err := Parse([]string{"--log-format=xml"}, env(nil))
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"--cluster-name", "--cloud-provider", "--log-format"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %s: %v", want, err)
		}
	}
}

func TestHelpIsNotAnError(t *testing.T) {
	if _, err := Parse([]string{"--help"}, env(nil)); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help gives %v, want flag.ErrHelp", err)
	}
}

func TestFakeCloudEndpointUsesTheRemoteCloudWithoutKubelets(t *testing.T) {
	opts, err := Parse(append([]string{"--fake-cloud-endpoint=http://127.0.0.1:8090"}, required...), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	// No manager: setting up the in-process kubelet simulator would need one.
	api, err := newFakeCloud(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := api.(*fakecloud.Remote); !ok {
		t.Fatalf("newFakeCloud = %T, want *fakecloud.Remote", api)
	}
}
