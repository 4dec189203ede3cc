// Package aws is the EC2 provider: it implements cloudprovider.API with aws-sdk-go-v2,
// launching with CreateFleet from launch templates, starting, stopping and terminating
// in batches, and describing instance types, offerings and prices. It acts only on
// instances that carry its cluster's ownership tag. docs/aws.md says what it calls and
// the permissions it needs.
package aws

import (
	"time"

	"k8s.io/utils/clock"
)

// Options configure the EC2 provider.
type Options struct {
	// ClusterName is recorded in the ownership tags; only instances tagged with it are
	// Stratos's.
	ClusterName string
	// Region such as us-east-1. Empty: the SDK's default chain (AWS_REGION, the shared
	// config, the instance metadata).
	Region string
	// Endpoint overrides the URL of every AWS service, for tests and the simulator
	// against moto. Empty: AWS's own endpoints.
	Endpoint string
	// Cluster is what a node needs to join: the API server's endpoint and CA, and the
	// service CIDR.
	Cluster ClusterDetails
	// KubernetesVersion (1.37) picks the images behind an AMI alias.
	KubernetesVersion string
	// SSMParameterRoot is where the images behind an alias are published: /aws/service on
	// AWS. Tests against moto, which reserves /aws, write them under another root.
	SSMParameterRoot string
	// CatalogRefresh is how often instance types and offerings are described again.
	CatalogRefresh time.Duration
	// PriceRefresh is how often spot and on-demand prices are read again.
	PriceRefresh time.Duration
	// LaunchTemplateTTL is how long a launch template no launch used, and at least as
	// old, is kept before the leader deletes it.
	LaunchTemplateTTL time.Duration
	// Clock is injectable for tests.
	Clock clock.Clock
}

// Defaults of Options.
const (
	DefaultSSMParameterRoot  = "/aws/service"
	DefaultCatalogRefresh    = time.Hour
	DefaultPriceRefresh      = 10 * time.Minute
	DefaultLaunchTemplateTTL = time.Hour
)

// WithDefaults fills unset fields.
func (o Options) WithDefaults() Options {
	if o.SSMParameterRoot == "" {
		o.SSMParameterRoot = DefaultSSMParameterRoot
	}
	if o.CatalogRefresh <= 0 {
		o.CatalogRefresh = DefaultCatalogRefresh
	}
	if o.PriceRefresh <= 0 {
		o.PriceRefresh = DefaultPriceRefresh
	}
	if o.LaunchTemplateTTL <= 0 {
		o.LaunchTemplateTTL = DefaultLaunchTemplateTTL
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// ClusterDetails are the coordinates of the EKS cluster nodes join, as nodeadm's
// NodeConfig takes them.
type ClusterDetails struct {
	// Endpoint is the URL of the cluster's API server, such as https://ABC.gr7.us-east-1.eks.amazonaws.com.
	Endpoint string
	// CertificateAuthority is the PEM bundle of the cluster's certificate authority.
	CertificateAuthority []byte
	// ServiceCIDR is the cluster's service IP range, from which the node infers the DNS
	// address.
	ServiceCIDR string
}
