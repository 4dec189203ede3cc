package operator

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
	"github.com/stratos-sh/stratos/internal/controllers/ec2nodeclass"
)

// newAWSCloud builds the EC2 provider: clients from the SDK's default credential chain,
// the interruption queue when one is given, the catalogue's background refresh run by
// the manager, and the EC2NodeClass controller.
func newAWSCloud(ctx context.Context, opts *Options, mgr manager.Manager) (*aws.Cloud, error) {
	version := opts.KubernetesVersion
	if version == "" {
		var err error
		if version, err = serverMinorVersion(mgr); err != nil {
			return nil, err
		}
	}
	awsOpts := aws.Options{
		ClusterName:       opts.ClusterName,
		Region:            opts.AWSRegion,
		Endpoint:          opts.AWSEndpoint,
		KubernetesVersion: version,
		SSMParameterRoot:  opts.AWSSSMParameterRoot,
	}
	clients, err := aws.NewClients(ctx, awsOpts)
	if err != nil {
		return nil, err
	}
	given := aws.ClusterDetails{Endpoint: opts.ClusterEndpoint, ServiceCIDR: opts.ClusterServiceCIDR}
	if opts.ClusterCAFile != "" {
		if given.CertificateAuthority, err = os.ReadFile(opts.ClusterCAFile); err != nil {
			return nil, fmt.Errorf("--cluster-ca-file: %w", err)
		}
	}
	if awsOpts.Cluster, err = aws.ResolveClusterDetails(ctx, clients.EKS, opts.ClusterName, given); err != nil {
		return nil, err
	}
	cloud := aws.New(awsOpts, clients)
	if opts.InterruptionQueue != "" {
		// Opened here, before the manager starts, so that a queue that cannot be read
		// stops the operator with the reason.
		queue, err := aws.OpenInterruptionQueue(ctx, clients.SQS, opts.InterruptionQueue, aws.QueueOptions{})
		if err != nil {
			return nil, fmt.Errorf("--interruption-queue: %w", err)
		}
		cloud.ReadNoticesFrom(queue)
	}
	if err := mgr.Add(manager.RunnableFunc(cloud.Start)); err != nil {
		return nil, err
	}
	// The node classes resolve into the status launches read: images, subnets, security
	// groups and the instance profile.
	resolver := aws.NewResolver(awsOpts, clients)
	if err := (&ec2nodeclass.AWSReconciler{Client: mgr.GetClient(), Resolver: resolver, Recorder: mgr.GetEventRecorder("stratos"), Options: ec2nodeclass.Options{}}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return cloud, nil
}

// serverMinorVersion asks the API server its version: 1.37 for v1.37.2-eks-1234.
func serverMinorVersion(mgr manager.Manager) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return "", err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("asking the API server its version (set --kubernetes-version to skip): %w", err)
	}
	minor := strings.TrimRight(info.Minor, "+")
	if info.Major == "" || minor == "" {
		return "", fmt.Errorf("the API server reports version %q; set --kubernetes-version", info.GitVersion)
	}
	return info.Major + "." + minor, nil
}

var _ cloudprovider.API = (*aws.Cloud)(nil)
