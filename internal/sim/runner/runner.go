// Package runner runs a scenario against a simulated cluster: a real control plane, a
// cloud (the fake cloud in this process, moto with the EC2 provider, or Cluster API's
// controllers with the simulator's infrastructure provider over the fake cloud) with the
// kubelet simulator in this process, and the real stratos binary as a child process reaching the
// cloud over loopback, so that the operator can be killed while its instances live on.
// It reports what users feel (pod creation → Running) and what must never happen
// (leaks, duplicates).
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/ccm"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/capienv"
	"github.com/stratos-sh/stratos/internal/sim/controlplane"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/internal/sim/operatorproc"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// ClusterName is the cluster the simulated operator manages; its instances carry it.
const ClusterName = "sim"

// Options configure a run.
type Options struct {
	Scenario *scenario.Scenario
	// ToolsDir holds etcd, kube-apiserver, kube-scheduler and kube-controller-manager,
	// and on clusterapi capi-manager and capi-config/ (hack/tools.sh capi-manager).
	ToolsDir string
	// OperatorBinary is the stratos binary to run.
	OperatorBinary string
	// CRDDir holds the Stratos CRDs.
	CRDDir string
	// WorkDir receives kubeconfigs and logs; the admin kubeconfig is
	// WorkDir/admin.kubeconfig while the run lasts.
	WorkDir string
	// Progress receives a live line every ProgressInterval; nil for none.
	Progress         io.Writer
	ProgressInterval time.Duration
}

// run is one scenario run in progress.
type run struct {
	opts     Options
	scale    float64
	started  time.Time
	rng      *rand.Rand
	cloud    simCloud
	client   client.Client
	observer *observer
	operator *operatorproc.Process
	report   *report.Report

	// kills are the pending killOperator steps; background the later batches of
	// interrupt steps.
	kills      sync.WaitGroup
	background sync.WaitGroup
	// failures collects what made the run fail, from any goroutine.
	mu        sync.Mutex
	failures  []string
	timeline  []report.Sample
	peakNodes int
	// standby integrates the pools' standby claims over the operator's calendar.
	standby *report.StandbyMeter
	// displacements are the Nodes interrupt and unhealthy steps displaced pods from.
	displacements []displacement
	// marks are the moments mark steps named.
	marks map[string]moment
	// callSamples are the operator's cloud calls so far, sampled with the timeline.
	callSamples []report.CallSample
	// decisions reads the operator's decision time from its metrics.
	decisions *decisionScraper
}

// Run runs the scenario and returns its report. An error means the simulated cluster
// could not be set up or torn down; a scenario that fails is a report with OK false. On
// aws and clusterapi, the scenario's fake node classes are translated in place (see
// ec2NodeClasses and clusterAPINodeClasses).
func Run(ctx context.Context, opts Options) (*report.Report, error) {
	s := opts.Scenario
	if s.Cloud == scenario.CloudAWS {
		classes := ec2NodeClasses{discoveryTags: map[string]string{discoveryTag: ClusterName}, role: nodeRole}
		if err := classes.translate(s); err != nil {
			return nil, err
		}
	}
	r := &run{
		opts:     opts,
		scale:    s.TimeScale,
		rng:      rand.New(rand.NewPCG(uint64(s.Seed), 0)),
		observer: newObserver(),
		report:   &report.Report{Scenario: s.Name, Cloud: s.Cloud, TimeScale: s.TimeScale},
	}
	logf := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, format+"\n", args...)
		}
	}

	logf("starting etcd, kube-apiserver, kube-scheduler and kube-controller-manager...")
	setupStarted := time.Now()
	gogc := operatorGOGC()
	cp, err := controlplane.Start(ctx, controlplane.Options{ToolsDir: opts.ToolsDir, WorkDir: opts.WorkDir, CRDDir: opts.CRDDir})
	if err != nil {
		return nil, err
	}
	defer func() { _ = cp.Stop() }()
	logf("control plane ready in %s; kubeconfig: %s", time.Since(setupStarted).Round(time.Millisecond), cp.AdminKubeconfig)

	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	stopCloud, err := r.startCloud(simCtx, cp)
	if err != nil {
		return nil, err
	}
	defer stopCloud()
	if capi, ok := r.cloud.(*clusterAPISimCloud); ok {
		logf("CAPI's core controllers and the simulator's infrastructure provider ready in %s", time.Since(setupStarted).Round(time.Millisecond))
		if err := capi.classes.translate(s); err != nil {
			return nil, err
		}
	}

	if err := apply(ctx, r.client, s.Objects); err != nil {
		return nil, err
	}
	operatorLog := filepath.Join(opts.WorkDir, "stratos.log")
	// The operator appends to its log across restarts, and reads windows on the clock of
	// the calendar file until the run ends: those of an earlier run go first.
	for _, stale := range []string{operatorLog, r.calendarFile()} {
		if err := os.Remove(stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	metricsAddress, err := freeLoopbackAddress()
	if err != nil {
		return nil, err
	}
	r.decisions = newDecisionScraper(metricsAddress)
	args := append(operatorArgs(cp.OperatorKubeconfig, r.cloud.operatorFlags(), s), "--calendar-file="+r.calendarFile(), "--metrics-bind-address="+metricsAddress)
	r.operator, err = operatorproc.Start(opts.OperatorBinary, args, append(r.cloud.operatorEnv(), "GOGC="+gogc), operatorLog)
	if err != nil {
		return nil, err
	}
	logf("stratos running on the %s cloud (log: %s); running %d steps at time scale %g", s.Cloud, operatorLog, len(s.Steps), s.TimeScale)

	r.started = time.Now()
	r.standby = report.NewStandbyMeter(r.started, s.TimeScale)
	background, stopBackground := context.WithCancel(simCtx)
	var watchers sync.WaitGroup
	watchers.Add(1)
	go func() { defer watchers.Done(); r.watch(background) }()
	r.runSteps(ctx)
	// The timeline's last sample may be half a second old: the standby figures run to
	// the end of the steps.
	if v, err := look(ctx, r.client, r.observer); err == nil {
		r.observeStandby(v)
	}
	r.kills.Wait()
	r.background.Wait()
	stopBackground()
	watchers.Wait()

	r.checkInvariants(ctx)
	// The last figures before the operator goes: its histogram goes with it.
	r.sampleCalls(time.Now())
	r.decisions.scrape(ctx)
	stopErr := r.operator.Stop()
	r.collect()
	return r.report, stopErr
}

// startCloud starts the scenario's cloud, serves it to the operator on loopback, and runs
// the kubelet simulator and the observer's informers in a manager of this process.
func (r *run) startCloud(ctx context.Context, cp *controlplane.ControlPlane) (stop func(), err error) {
	s := r.opts.Scenario
	// The kubelets of a thousand pods write fast; client-go's default of 5 queries a
	// second would make the simulator, not Stratos, the bottleneck.
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	logFile, err := os.Create(filepath.Join(r.opts.WorkDir, "sim.log"))
	if err != nil {
		return nil, err
	}
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(logFile, prefix, args) }, funcr.Options{})
	// client-go and controller-runtime log through the global logger too.
	ctrllog.SetLogger(logger)
	var webhook *capienv.Webhook
	if s.Cloud == scenario.CloudClusterAPI {
		// The CRDs go first: the simulator's informers on Machines need them.
		if webhook, err = installClusterAPI(ctx, cfg, r.opts.ToolsDir, r.opts.WorkDir); err != nil {
			return nil, err
		}
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                 simScheme,
		Logger:                 logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Nothing in the simulator reads who wrote which field: without them the cache
		// of 5,000 pods is a good part smaller, and so is every copy of one.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return nil, err
	}
	direct, err := client.New(cfg, client.Options{Scheme: simScheme})
	if err != nil {
		return nil, err
	}
	switch s.Cloud {
	case scenario.CloudAWS:
		r.cloud, err = startAWSCloud(ctx, s, r.opts.WorkDir)
	case scenario.CloudClusterAPI:
		var capi *clusterAPISimCloud
		if capi, err = newClusterAPICloud(ctx, s, mgr, webhook); err == nil {
			r.cloud = capi
			err = capi.setupProviders(mgr, s.TimeScale)
		}
	default:
		r.cloud, err = startFakeCloud(s)
	}
	if err != nil {
		return nil, err
	}
	machines := r.cloud.machines()
	// Machines that poll their cloud run in the manager.
	if runnable, ok := machines.(manager.Runnable); ok {
		err = mgr.Add(runnable)
	}
	if err == nil {
		err = kubelet.NewKubelet(machines, direct, kubelet.KubeletOptions{}).SetupWithManager(mgr)
	}
	if err == nil {
		err = r.addCloudControllerManager(mgr, cfg)
	}
	if err == nil {
		err = r.addObserver(ctx, mgr)
	}
	if err != nil {
		r.cloud.stop()
		return nil, err
	}
	r.client = mgr.GetClient()

	mgrCtx, stopMgr := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	stop = func() {
		stopMgr()
		<-done
		r.cloud.stop()
		logFile.Close()
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		stop()
		return nil, errors.New("the simulator's caches did not sync")
	}
	if capi, ok := r.cloud.(*clusterAPISimCloud); ok {
		if err := capi.start(ctx, cp, r.opts.ToolsDir, r.opts.WorkDir); err != nil {
			stop()
			return nil, err
		}
	}
	return stop, nil
}

// addCloudControllerManager runs the cloud controller manager's node lifecycle
// controller against the scenario's cloud, as EKS runs it: the Nodes of stopped standby
// instances get its shutdown taint.
func (r *run) addCloudControllerManager(mgr manager.Manager, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		return ccm.Run(ctx, kube, r.cloud.Instances, ccm.MonitorPeriod)
	}))
}

// addObserver registers the observer's handlers on the manager's informers.
func (r *run) addObserver(ctx context.Context, mgr manager.Manager) error {
	pods, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	if _, err := pods.AddEventHandler(r.observer.podHandler()); err != nil {
		return err
	}
	nodes, err := mgr.GetCache().GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return err
	}
	if _, err := nodes.AddEventHandler(r.observer.nodeHandler()); err != nil {
		return err
	}
	claims, err := mgr.GetCache().GetInformer(ctx, &v1beta1.NodeClaim{})
	if err != nil {
		return err
	}
	_, err = claims.AddEventHandler(r.observer.claimHandler())
	return err
}

// operatorArgs runs the operator as a single replica against the cloud its flags reach.
// Leader election is off: there is one replica, and a restart should measure Stratos's
// recovery rather than the expiry of a dead leader's Lease.
func operatorArgs(kubeconfig string, cloudFlags []string, s *scenario.Scenario) []string {
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--cluster-name=" + ClusterName,
	}, cloudFlags...)
	args = append(args,
		"--leader-elect=false",
		"--health-probe-bind-address=0",
		"--log-format=text",
	)
	return append(args, s.OperatorArgs...)
}

// calendarFile is where setClock steps set the operator's windows clock.
func (r *run) calendarFile() string { return filepath.Join(r.opts.WorkDir, "calendar.json") }

// wall converts a scenario duration to wall time.
func (r *run) wall(d time.Duration) time.Duration { return time.Duration(float64(d) / r.scale) }

// now is the scenario time since the steps began.
func (r *run) now() float64 { return time.Since(r.started).Seconds() * r.scale }

func (r *run) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
