package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/utils/clock"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/ec2machines"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/internal/sim/moto"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// simCloud is the cloud a scenario runs against, as the runner drives and observes it:
// the fake cloud in this process, or moto with the EC2 provider.
type simCloud interface {
	// Instances are every instance the cloud knows, for the cloud controller manager,
	// the start-call latency and the steps that pick instances.
	Instances() []cloudprovider.Instance
	// owned are the instances as the operator owns them, for the invariants: the cloud's
	// instances, or on clusterapi its Machines and any machine without one.
	owned() []cloudprovider.Instance
	// machines feed the kubelet simulator.
	machines() kubelet.Machines
	// operatorFlags and operatorEnv reach the cloud from the operator.
	operatorFlags() []string
	operatorEnv() []string
	// calls are the operator's calls so far by operation; record fills the report's.
	calls() map[string]int
	record(rep *report.Report)
	// startCalls are the operator's StartInstances calls.
	startCalls() []startCall
	// setFaults replaces the injected faults; only the fake cloud has them.
	setFaults(*scenario.Faults)
	// problems are what the cloud found wrong with the instances the operator launched.
	problems() []string
	// interrupt gives notice of a kind (scenario.KindSpot…) about instances, taking them
	// away after notice (scenario time); makeUnhealthy makes their kubelets fail. Only
	// the fake cloud has them.
	interrupt(kind string, ids []string, notice time.Duration) error
	makeUnhealthy(ids []string, how physics.Unhealthy) error
	stop()
}

// serve serves handler on a loopback port and returns its URL.
func serve(handler http.Handler) (*http.Server, string, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(listener) }()
	return server, "http://" + listener.Addr().String(), nil
}

// fakeSimCloud is the fake cloud in this process, served to the operator over loopback.
type fakeSimCloud struct {
	cloud     *fakecloud.Cloud
	scale     float64
	recording *recordingCloud
	server    *http.Server
	endpoint  string
}

func startFakeCloud(s *scenario.Scenario) (*fakeSimCloud, error) {
	opts := fakecloud.Options{Clock: clock.RealClock{}, TimeScale: s.TimeScale, Seed: s.Seed, Physics: physics.DefaultPhysics().With(s.Physics)}
	if s.CallLatency != nil {
		opts.CallLatency = s.CallLatency.Duration
	}
	c := &fakeSimCloud{cloud: fakecloud.New(opts), scale: s.TimeScale}
	c.cloud.SetFaults(faults(s.Faults))
	c.recording = &recordingCloud{API: c.cloud}
	var err error
	c.server, c.endpoint, err = serve(fakecloud.NewServer(c.recording))
	return c, err
}

func (c *fakeSimCloud) Instances() []cloudprovider.Instance { return c.cloud.Instances() }
func (c *fakeSimCloud) machines() kubelet.Machines          { return c.cloud }
func (c *fakeSimCloud) owned() []cloudprovider.Instance     { return c.cloud.Instances() }
func (c *fakeSimCloud) operatorFlags() []string {
	return []string{"--cloud-provider=fake", "--fake-cloud-endpoint=" + c.endpoint}
}
func (c *fakeSimCloud) operatorEnv() []string        { return nil }
func (c *fakeSimCloud) calls() map[string]int        { return c.cloud.Calls() }
func (c *fakeSimCloud) record(rep *report.Report)    { rep.CloudCalls = c.cloud.Calls() }
func (c *fakeSimCloud) startCalls() []startCall      { return c.recording.startCalls() }
func (c *fakeSimCloud) setFaults(f *scenario.Faults) { c.cloud.SetFaults(faults(f)) }
func (c *fakeSimCloud) problems() []string           { return nil }
func (c *fakeSimCloud) stop()                        { _ = c.server.Close() }

func (c *fakeSimCloud) interrupt(kind string, ids []string, notice time.Duration) error {
	switch kind {
	case scenario.KindRebalance:
		return c.cloud.RecommendRebalance(ids)
	case scenario.KindScheduledChange:
		// The cloud's clock is the wall clock: the retirement is notice away at the scale.
		return c.cloud.ScheduleChange(ids, c.cloud.Clock().Now().Add(time.Duration(float64(notice)/c.scale)))
	default:
		return c.cloud.Interrupt(ids, notice)
	}
}

func (c *fakeSimCloud) makeUnhealthy(ids []string, how physics.Unhealthy) error {
	return c.cloud.MakeUnhealthy(ids, how)
}

// awsSimCloud is moto, prepared as an AWS account for the cluster, with the operator's
// calls counted by a proxy in front of it and the kubelets fed by its instances.
type awsSimCloud struct {
	moto     *moto.Server
	proxy    *recordingProxy
	server   *http.Server
	endpoint string
	kubelets *ec2machines.Machines
}

// startAWSCloud starts moto (its log in the work folder) and prepares the account.
func startAWSCloud(ctx context.Context, s *scenario.Scenario, workDir string) (*awsSimCloud, error) {
	server, err := moto.Start(ctx, filepath.Join(workDir, "moto.log"))
	if err != nil {
		return nil, err
	}
	c := &awsSimCloud{moto: server}
	if err := prepareAccount(ctx, server.Endpoint, ClusterName); err != nil {
		server.Stop()
		return nil, fmt.Errorf("preparing moto's account: %w", err)
	}
	target, err := url.Parse(server.Endpoint)
	if err != nil {
		server.Stop()
		return nil, err
	}
	var latency time.Duration
	if s.CallLatency != nil {
		latency = s.CallLatency.Duration
	}
	c.proxy = newRecordingProxy(target, latency)
	if c.server, c.endpoint, err = serve(c.proxy); err != nil {
		server.Stop()
		return nil, err
	}
	c.kubelets = ec2machines.New(ec2machines.Options{
		// The kubelets call moto directly: their polls are not the operator's calls.
		EC2:         ec2.New(ec2.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: aws.String(server.Endpoint)}),
		ClusterName: ClusterName,
		Region:      awsRegion,
		Physics:     physics.DefaultPhysics().With(s.Physics),
		TimeScale:   s.TimeScale,
		Seed:        s.Seed,
	})
	return c, nil
}

func (c *awsSimCloud) Instances() []cloudprovider.Instance { return c.kubelets.Instances() }
func (c *awsSimCloud) machines() kubelet.Machines          { return c.kubelets }
func (c *awsSimCloud) owned() []cloudprovider.Instance     { return c.kubelets.Instances() }
func (c *awsSimCloud) operatorFlags() []string {
	return []string{
		"--cloud-provider=aws", "--aws-endpoint=" + c.endpoint, "--aws-region=" + awsRegion,
		"--aws-ssm-parameter-root=" + ssmParameterRoot, "--kubernetes-version=" + kubernetesVersion,
	}
}
func (c *awsSimCloud) operatorEnv() []string { return motoEnv }
func (c *awsSimCloud) calls() map[string]int {
	calls, _ := c.proxy.counts()
	return calls
}
func (c *awsSimCloud) record(rep *report.Report) {
	rep.CloudCalls, rep.CloudErrors = c.proxy.counts()
	rep.SimulatorCloudCalls = c.kubelets.Calls()
}
func (c *awsSimCloud) startCalls() []startCall    { return c.proxy.startCalls() }
func (c *awsSimCloud) setFaults(*scenario.Faults) {}
func (c *awsSimCloud) problems() []string         { return c.kubelets.Problems() }

// Validation refuses interrupt and unhealthy steps on aws; these answer a caller that
// did not validate.
func (c *awsSimCloud) interrupt(string, []string, time.Duration) error {
	return errors.New("interrupt: only the fake cloud gives notices")
}

func (c *awsSimCloud) makeUnhealthy([]string, physics.Unhealthy) error {
	return errors.New("unhealthy: only the fake cloud makes kubelets fail")
}
func (c *awsSimCloud) stop() {
	_ = c.server.Close()
	c.moto.Stop()
}
