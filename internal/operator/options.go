package operator

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/podscope"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// Cloud providers the operator can run with.
const (
	ProviderFake = "fake"
	ProviderAWS  = "aws"
	// ProviderClusterAPI launches nodes as Cluster API Machines (ClusterAPINodeClass).
	ProviderClusterAPI = "clusterapi"
)

// EnvPrefix starts the environment variable of every flag: --cluster-name is
// STRATOS_CLUSTER_NAME. A flag given on the command line wins over its variable.
const EnvPrefix = "STRATOS_"

// Options configure the operator. Every field has a flag and an environment variable.
type Options struct {
	ClusterName   string
	CloudProvider string
	Kubeconfig    string

	KubeAPIQPS   float64
	KubeAPIBurst int

	BatchIdle             time.Duration
	BatchMax              time.Duration
	LaunchTimeout         time.Duration
	RegistrationTimeout   time.Duration
	InitializationTimeout time.Duration
	StartTimeout          time.Duration
	StopTimeout           time.Duration
	GCInterval            time.Duration
	GCGracePeriod         time.Duration
	// UnavailableOfferingTTL is how long an offering the cloud refused for lack of
	// capacity is avoided.
	UnavailableOfferingTTL time.Duration
	// AbandonBlockedDrainAfter is how long PodDisruptionBudgets may block a voluntary
	// drain, in a pool without a terminationGracePeriod, before it is abandoned.
	AbandonBlockedDrainAfter time.Duration
	// PoolMaxCreationsPerPass and PoolMaxCreationsPerMinute bound the claims the
	// nodepool controller creates for one pool; WarmupFailureBackoff and
	// WarmupFailureBackoffMax bound a pool's backoff after failed warm-ups.
	PoolMaxCreationsPerPass   int
	PoolMaxCreationsPerMinute int
	WarmupFailureBackoff      time.Duration
	WarmupFailureBackoffMax   time.Duration

	LeaderElect                 bool
	LeaderElectionID            string
	LeaderElectionNamespace     string
	LeaderElectionLeaseDuration time.Duration
	LeaderElectionRenewDeadline time.Duration
	LeaderElectionRetryPeriod   time.Duration
	MetricsBindAddress          string
	HealthProbeBindAddress      string
	PprofBindAddress            string
	GracefulShutdownTimeout     time.Duration
	LogLevel                    string
	LogFormat                   string
	FakeTimeScale               float64
	CalendarFile                string
	FakeSeed                    int64
	FakeCloudEndpoint           string
	AWSRegion                   string
	AWSEndpoint                 string
	AWSSSMParameterRoot         string
	KubernetesVersion           string
	ClusterEndpoint             string
	ClusterCAFile               string
	ClusterServiceCIDR          string
	PrePullNamespace            string
	// PodScope is which pending pods provisioning serves: auto, all or opted-in
	// (internal/podscope); ClusterAutoscalerStatusConfigMap is where auto looks for
	// Cluster Autoscaler, as namespace/name.
	PodScope                         string
	ClusterAutoscalerStatusConfigMap string
	// InterruptionQueue is the SQS queue, by name or URL, that EventBridge fills with
	// EC2's interruption warnings and other notices; empty reads none.
	InterruptionQueue string
	ShowVersion       bool
}

// NewFlagSet returns the operator's flags, bound to opts and filled with the defaults.
func NewFlagSet(opts *Options) *flag.FlagSet {
	fs := flag.NewFlagSet("stratos", flag.ContinueOnError)
	fs.StringVar(&opts.ClusterName, "cluster-name", "", "Name of the cluster, recorded in the ownership tags of every instance (required).")
	fs.StringVar(&opts.CloudProvider, "cloud-provider", "", "Cloud to run instances in: fake (the simulated cloud), aws (EC2) or clusterapi (Cluster API Machines of any infrastructure) (required).")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Unset: $KUBECONFIG, the in-cluster service account, then ~/.kube/config.")
	fs.Float64Var(&opts.KubeAPIQPS, "kube-api-qps", 200, "Queries per second the operator may send to the API server.")
	fs.IntVar(&opts.KubeAPIBurst, "kube-api-burst", 300, "Burst of queries above kube-api-qps the operator may send to the API server.")
	fs.DurationVar(&opts.BatchIdle, "batch-idle-duration", 25*time.Millisecond, "Provisioning decides once no pod became unschedulable for this long.")
	fs.DurationVar(&opts.BatchMax, "batch-max-duration", 50*time.Millisecond, "Provisioning decides at the latest this long after the first pod of a batch became unschedulable.")
	fs.DurationVar(&opts.LaunchTimeout, "launch-timeout", 5*time.Minute, "How long a NodeClaim may fail to get an instance before it is deleted.")
	fs.DurationVar(&opts.RegistrationTimeout, "registration-timeout", 15*time.Minute, "How long after the launch an instance's Node may take to register before the claim and instance are removed.")
	fs.DurationVar(&opts.InitializationTimeout, "initialization-timeout", 10*time.Minute, "How long after its Node registered a NodeClaim asked to run may take to be initialised (Ready, network up, startup taints gone) before the claim and instance are removed.")
	fs.DurationVar(&opts.StartTimeout, "start-timeout", 3*time.Minute, "How long after a standby node's start its Node may take to be Ready again before the claim and instance are removed.")
	fs.DurationVar(&opts.StopTimeout, "stop-timeout", 10*time.Minute, "How long an instance may take to stop before its stop is forced; a forced stop that has not ended within as long again removes the claim and terminates the instance.")
	fs.DurationVar(&opts.AbandonBlockedDrainAfter, "abandon-blocked-drain-after", disruption.DefaultAbandonDrainAfter, "How long PodDisruptionBudgets may block the drain of a node given back, removed or replaced, in a pool that sets no terminationGracePeriod, before the drain is abandoned and the node runs again.")
	fs.IntVar(&opts.PoolMaxCreationsPerPass, "pool-max-creations-per-pass", nodepool.DefaultMaxCreationsPerPass, "Most NodeClaims the nodepool controller creates for one pool in one pass (standby claims and a running minimum's launches), so that a typo in standby.min cannot launch thousands of instances at once. Provisioning for pending pods is not bounded by it.")
	fs.IntVar(&opts.PoolMaxCreationsPerMinute, "pool-max-creations-per-minute", nodepool.DefaultMaxCreationsPerMinute, "Most NodeClaims the nodepool controller creates for one pool per minute: a token bucket holding a minute's worth, refilled at this rate.")
	fs.DurationVar(&opts.WarmupFailureBackoff, "warmup-failure-backoff", nodepool.DefaultWarmupBackoff, "How long a pool makes no standby claim after one of its claims failed to warm up or to register; doubled at each failure in a row.")
	fs.DurationVar(&opts.WarmupFailureBackoffMax, "warmup-failure-backoff-max", nodepool.DefaultWarmupBackoffMax, "The longest a pool whose warm-ups keep failing waits between standby claims.")
	fs.DurationVar(&opts.GCInterval, "gc-interval", time.Minute, "How often garbage collection looks for leaked instances, claims without an instance and Nodes without a claim.")
	fs.DurationVar(&opts.GCGracePeriod, "gc-grace-period", 2*time.Minute, "How old a leak must be before garbage collection removes it.")
	fs.DurationVar(&opts.UnavailableOfferingTTL, "unavailable-offering-ttl", cloudprovider.DefaultUnavailableOfferingTTL, "How long an offering (instance type, zone, capacity type) the cloud refused to launch or start for lack of capacity is left out of provisioning, standby planning and launches.")
	fs.BoolVar(&opts.LeaderElect, "leader-elect", true, "Elect a leader so that only one replica acts; the others wait.")
	fs.StringVar(&opts.LeaderElectionID, "leader-election-id", "stratos-leader-election", "Name of the Lease the replicas compete for.")
	fs.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader-election Lease. Unset: the operator's own namespace in a cluster, kube-system outside.")
	fs.DurationVar(&opts.LeaderElectionLeaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a replica waits after the leader's last renewal before it takes over.")
	fs.DurationVar(&opts.LeaderElectionRenewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before it steps down.")
	fs.DurationVar(&opts.LeaderElectionRetryPeriod, "leader-election-retry-period", 2*time.Second, "How often replicas try to acquire or renew the Lease.")
	fs.StringVar(&opts.MetricsBindAddress, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint (/metrics); 0 turns it off.")
	fs.StringVar(&opts.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz probes; 0 turns them off.")
	fs.StringVar(&opts.PprofBindAddress, "pprof-bind-address", "0", "Address of Go's profiling endpoints (/debug/pprof/), to find where the operator's CPU and memory go; 0 (the default) turns them off.")
	fs.DurationVar(&opts.GracefulShutdownTimeout, "graceful-shutdown-timeout", 30*time.Second, "How long controllers get to finish after SIGTERM before the operator exits.")
	fs.StringVar(&opts.LogLevel, "log-level", "info", "Least severe log level written: debug, info or error.")
	fs.StringVar(&opts.LogFormat, "log-format", "json", "Log format: json (one object a line) or text (key=value).")
	fs.Float64Var(&opts.FakeTimeScale, "fake-time-scale", 1, "With --cloud-provider=fake: how many times faster than real time the simulated cloud runs.")
	fs.Int64Var(&opts.FakeSeed, "fake-seed", 1, "With --cloud-provider=fake: seed of the simulated cloud's jitter and faults.")
	fs.StringVar(&opts.FakeCloudEndpoint, "fake-cloud-endpoint", "", "With --cloud-provider=fake: URL of a fake cloud served by another process (stratos-sim); empty runs the fake cloud and its kubelet simulator inside the operator.")
	fs.StringVar(&opts.AWSRegion, "aws-region", "", "With --cloud-provider=aws: the region to launch in. Unset: the SDK's default chain (AWS_REGION, the shared config, the instance metadata).")
	fs.StringVar(&opts.AWSEndpoint, "aws-endpoint", "", "With --cloud-provider=aws: a URL every AWS service is called at instead of AWS's own, for tests and the simulator against an emulator (moto). Leave unset on AWS.")
	fs.StringVar(&opts.AWSSSMParameterRoot, "aws-ssm-parameter-root", "/aws/service", "With --cloud-provider=aws: the SSM path under which the images behind AMI aliases are published. Change it only against an emulator that reserves /aws.")
	fs.StringVar(&opts.InterruptionQueue, "interruption-queue", "", "With --cloud-provider=aws: the SQS queue, by name or URL, that EventBridge rules fill with EC2's spot interruption warnings, rebalance recommendations, scheduled changes and instance state changes (deploy/interruption sets it up). Unset: no queue is read and such notices reach Stratos only through its polling.")
	fs.StringVar(&opts.ClusterEndpoint, "cluster-endpoint", "", "With --cloud-provider=aws: the URL nodes reach the API server at. Unset: eks:DescribeCluster of --cluster-name.")
	fs.StringVar(&opts.ClusterCAFile, "cluster-ca-file", "", "With --cloud-provider=aws: a PEM file of the cluster's certificate authority, for nodes. Unset: eks:DescribeCluster of --cluster-name.")
	fs.StringVar(&opts.ClusterServiceCIDR, "cluster-service-cidr", "", "With --cloud-provider=aws: the cluster's service IP range, from which nodes infer the DNS address. Unset: eks:DescribeCluster of --cluster-name.")
	fs.StringVar(&opts.KubernetesVersion, "kubernetes-version", "", "The cluster's Kubernetes minor version (1.37) for AMI aliases. Unset: the API server's version.")
	fs.StringVar(&opts.PrePullNamespace, "prepull-namespace", "", "Namespace of the pods that pull a pool's warmup images on its warming nodes. Unset: the operator's own namespace in a cluster, kube-system outside.")
	fs.StringVar(&opts.PodScope, "pod-scope", string(podscope.Auto), "Which pending pods Stratos serves: all (every pod a pool could hold), opted-in (pods whose nodeSelector or required node affinity names a stratos.sh/ label, or that tolerate a taint of a pool), or auto (all unless Karpenter NodePools or Cluster Autoscaler's status ConfigMap exist, then opted-in; looked at every 30s).")
	fs.StringVar(&opts.ClusterAutoscalerStatusConfigMap, "cluster-autoscaler-status-configmap", podscope.DefaultStatusConfigMap.String(), "With --pod-scope=auto: the namespace/name of the ConfigMap whose existence tells that Cluster Autoscaler runs (its status ConfigMap).")
	fs.StringVar(&opts.CalendarFile, "calendar-file", "", "A file that sets the clock time windows are read on, for simulations and rehearsals (stratos-sim writes it); empty reads windows on the real clock.")
	fs.BoolVar(&opts.ShowVersion, "version", false, "Print the version and exit.")
	fs.Usage = func() { PrintUsage(fs.Output(), fs) }
	return fs
}

// Parse fills opts from args and the environment, then checks them.
func Parse(args []string, lookupEnv func(string) (string, bool)) (*Options, error) {
	opts := &Options{}
	fs := NewFlagSet(opts)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := applyEnv(fs, lookupEnv); err != nil {
		return nil, err
	}
	if opts.ShowVersion {
		return opts, nil
	}
	return opts, opts.Validate()
}

// EnvName is the environment variable of a flag.
func EnvName(flagName string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its environment variable.
func applyEnv(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		if value, ok := lookupEnv(EnvName(f.Name)); ok {
			if err := fs.Set(f.Name, value); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", EnvName(f.Name), value, err))
			}
		}
	})
	return errors.Join(errs...)
}

// clusterNamePattern is EKS's rule for cluster names, so that every EKS cluster can be
// named; such a name fits the tags, IAM paths and launch template names it goes into.
var clusterNamePattern = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)

// ControllerOptions are the options of the controllers.
func (o *Options) ControllerOptions() ControllerOptions {
	return ControllerOptions{
		NodeClaim: nodeclaim.Options{
			ClusterName:           o.ClusterName,
			LaunchTimeout:         o.LaunchTimeout,
			RegistrationTimeout:   o.RegistrationTimeout,
			InitializationTimeout: o.InitializationTimeout,
			StartTimeout:          o.StartTimeout,
			StopTimeout:           o.StopTimeout,
			GCInterval:            o.GCInterval,
			GCGracePeriod:         o.GCGracePeriod,
			PrePullNamespace:      namespaceOr(o.PrePullNamespace),
		},
		Provisioning: provisioning.Options{BatchIdle: o.BatchIdle, BatchMax: o.BatchMax},
		PodScope:     podscope.Scope(o.PodScope),
		// Validate checked the form: namespace/name.
		ClusterAutoscalerStatus: statusConfigMap(o.ClusterAutoscalerStatusConfigMap),
		Disruption:              disruption.Options{AbandonDrainAfter: o.AbandonBlockedDrainAfter},
		NodePool: nodepool.Options{
			MaxCreationsPerPass: o.PoolMaxCreationsPerPass, MaxCreationsPerMinute: o.PoolMaxCreationsPerMinute,
			WarmupBackoff: o.WarmupFailureBackoff, WarmupBackoffMax: o.WarmupFailureBackoffMax,
		},
	}
}

// Validate checks the options and says what is wrong with each bad one.
func (o *Options) Validate() error {
	var errs []error
	if o.ClusterName == "" {
		errs = append(errs, errors.New("--cluster-name is required"))
	} else if !clusterNamePattern.MatchString(o.ClusterName) {
		errs = append(errs, fmt.Errorf("--cluster-name %q must be 1 to 100 letters, digits, '-' and '_', starting with a letter or digit (EKS's rule for cluster names)", o.ClusterName))
	}
	switch o.CloudProvider {
	case ProviderFake, ProviderAWS, ProviderClusterAPI:
	case "":
		errs = append(errs, errors.New("--cloud-provider is required: fake, aws or clusterapi"))
	default:
		errs = append(errs, fmt.Errorf("--cloud-provider %q is not fake, aws or clusterapi", o.CloudProvider))
	}
	if o.KubeAPIQPS <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be positive, not %v", o.KubeAPIQPS))
	}
	if o.KubeAPIBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be at least 1, not %d", o.KubeAPIBurst))
	}
	if o.LeaderElect && o.LeaderElectionRenewDeadline >= o.LeaderElectionLeaseDuration {
		errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must be shorter than --leader-election-lease-duration (%s)", o.LeaderElectionRenewDeadline, o.LeaderElectionLeaseDuration))
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{{"--batch-idle-duration", o.BatchIdle}, {"--batch-max-duration", o.BatchMax}, {"--launch-timeout", o.LaunchTimeout}, {"--registration-timeout", o.RegistrationTimeout},
		{"--initialization-timeout", o.InitializationTimeout}, {"--start-timeout", o.StartTimeout}, {"--stop-timeout", o.StopTimeout}, {"--gc-interval", o.GCInterval}, {"--gc-grace-period", o.GCGracePeriod},
		{"--unavailable-offering-ttl", o.UnavailableOfferingTTL}, {"--abandon-blocked-drain-after", o.AbandonBlockedDrainAfter},
		{"--warmup-failure-backoff", o.WarmupFailureBackoff}, {"--warmup-failure-backoff-max", o.WarmupFailureBackoffMax}} {
		if d.value <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, not %s", d.flag, d.value))
		}
	}
	for _, n := range []struct {
		flag  string
		value int
	}{{"--pool-max-creations-per-pass", o.PoolMaxCreationsPerPass}, {"--pool-max-creations-per-minute", o.PoolMaxCreationsPerMinute}} {
		if n.value < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, not %d", n.flag, n.value))
		}
	}
	if o.WarmupFailureBackoffMax < o.WarmupFailureBackoff {
		errs = append(errs, fmt.Errorf("--warmup-failure-backoff-max (%s) must not be shorter than --warmup-failure-backoff (%s)", o.WarmupFailureBackoffMax, o.WarmupFailureBackoff))
	}
	if _, err := parseLevel(o.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if o.LogFormat != "json" && o.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("--log-format %q is not json or text", o.LogFormat))
	}
	if o.FakeTimeScale <= 0 {
		errs = append(errs, fmt.Errorf("--fake-time-scale must be positive, not %v", o.FakeTimeScale))
	}
	if o.FakeCloudEndpoint != "" {
		if o.CloudProvider != ProviderFake {
			errs = append(errs, fmt.Errorf("--fake-cloud-endpoint needs --cloud-provider=fake, not %q", o.CloudProvider))
		}
		if _, err := fakecloud.ParseEndpoint(o.FakeCloudEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("--fake-cloud-endpoint %w", err))
		}
	}
	if o.CloudProvider != ProviderAWS {
		for flagName, value := range map[string]string{"--aws-region": o.AWSRegion, "--aws-endpoint": o.AWSEndpoint, "--interruption-queue": o.InterruptionQueue} {
			if value != "" {
				errs = append(errs, fmt.Errorf("%s needs --cloud-provider=aws, not %q", flagName, o.CloudProvider))
			}
		}
	}
	if o.CloudProvider == ProviderClusterAPI {
		// The cluster's endpoint and CA reach the nodes through the bootstrap template on
		// Cluster API, and the Kubernetes version is the class's spec.version.
		for flagName, value := range map[string]string{"--cluster-endpoint": o.ClusterEndpoint, "--cluster-ca-file": o.ClusterCAFile,
			"--cluster-service-cidr": o.ClusterServiceCIDR, "--kubernetes-version": o.KubernetesVersion} {
			if value != "" {
				errs = append(errs, fmt.Errorf("%s does not apply to --cloud-provider=clusterapi", flagName))
			}
		}
	}
	if o.AWSEndpoint != "" {
		if u, err := url.Parse(o.AWSEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--aws-endpoint %q must be an http or https URL", o.AWSEndpoint))
		}
	}
	if o.InterruptionQueue != "" {
		if err := aws.CheckQueue(o.InterruptionQueue); err != nil {
			errs = append(errs, fmt.Errorf("--interruption-queue %w", err))
		}
	}
	if !strings.HasPrefix(o.AWSSSMParameterRoot, "/") {
		errs = append(errs, fmt.Errorf("--aws-ssm-parameter-root %q must be an SSM path starting with /", o.AWSSSMParameterRoot))
	}
	if o.PrePullNamespace != "" {
		if problems := validation.IsDNS1123Label(o.PrePullNamespace); len(problems) > 0 {
			errs = append(errs, fmt.Errorf("--prepull-namespace %q is not a namespace name: %s", o.PrePullNamespace, strings.Join(problems, "; ")))
		}
	}
	if _, err := podscope.Parse(o.PodScope); err != nil {
		errs = append(errs, fmt.Errorf("--pod-scope %w", err))
	}
	if err := checkStatusConfigMap(o.ClusterAutoscalerStatusConfigMap); err != nil {
		errs = append(errs, fmt.Errorf("--cluster-autoscaler-status-configmap %q %w", o.ClusterAutoscalerStatusConfigMap, err))
	}
	if o.KubernetesVersion != "" && !kubernetesMinorPattern.MatchString(o.KubernetesVersion) {
		errs = append(errs, fmt.Errorf("--kubernetes-version %q must be a minor version such as 1.37", o.KubernetesVersion))
	}
	return errors.Join(errs...)
}

// statusConfigMap splits a namespace/name.
func statusConfigMap(s string) types.NamespacedName {
	namespace, name, _ := strings.Cut(s, "/")
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// checkStatusConfigMap says what is wrong with a namespace/name of a ConfigMap.
func checkStatusConfigMap(s string) error {
	key := statusConfigMap(s)
	if !strings.Contains(s, "/") {
		return errors.New("must be namespace/name, such as kube-system/cluster-autoscaler-status")
	}
	if problems := validation.IsDNS1123Label(key.Namespace); len(problems) > 0 {
		return fmt.Errorf("names no namespace: %s", strings.Join(problems, "; "))
	}
	if problems := validation.IsDNS1123Subdomain(key.Name); len(problems) > 0 {
		return fmt.Errorf("names no ConfigMap: %s", strings.Join(problems, "; "))
	}
	return nil
}

// kubernetesMinorPattern is a Kubernetes minor version as AMI aliases name it.
var kubernetesMinorPattern = regexp.MustCompile(`^1\.[0-9]{1,3}$`)

// PrintUsage writes the help text: every flag with its default and its environment variable.
func PrintUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "stratos: a Kubernetes node autoscaler with warm pools of stopped nodes.\n\n")
	fmt.Fprintf(w, "Usage:\n  stratos --cluster-name NAME --cloud-provider fake|aws|clusterapi [flags]\n\n")
	fmt.Fprintf(w, "Every flag can also be set by the environment variable shown; a flag wins over its variable.\n\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "\n      %s\n      env %s", usage, EnvName(f.Name))
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, ", default %s", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintf(w, "\nThe operator stops gracefully on SIGTERM or SIGINT. Docs: docs/operations.md.\n")
}
