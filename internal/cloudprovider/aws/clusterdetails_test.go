package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
)

// What nodes need to join comes from eks:DescribeCluster, except what flags set.
func TestClusterDetailsFromDescribeCluster(t *testing.T) {
	clients, _ := newTestClients(t)
	ctx := context.Background()
	created, err := clients.EKS.CreateCluster(ctx, &eks.CreateClusterInput{
		Name:               aws.String("prod"),
		RoleArn:            aws.String("arn:aws:iam::123456789012:role/eks"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{"subnet-1", "subnet-2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResolveClusterDetails(ctx, clients.EKS, "prod", ClusterDetails{ServiceCIDR: "10.200.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Endpoint == "" || got.Endpoint != aws.ToString(created.Cluster.Endpoint) {
		t.Errorf("endpoint %q, want the cluster's %q", got.Endpoint, aws.ToString(created.Cluster.Endpoint))
	}
	if len(got.CertificateAuthority) == 0 {
		t.Error("no certificate authority")
	}
	if got.ServiceCIDR != "10.200.0.0/16" {
		t.Errorf("service CIDR %q: the flag's must win", got.ServiceCIDR)
	}

	if _, err := ResolveClusterDetails(ctx, clients.EKS, "missing", ClusterDetails{}); err == nil || !strings.Contains(err.Error(), "--cluster-endpoint") {
		t.Errorf("an unknown cluster gave %v, want an error that names the flags", err)
	}
	given := ClusterDetails{Endpoint: "https://x", CertificateAuthority: []byte("ca"), ServiceCIDR: "10.0.0.0/16"}
	if got, err := ResolveClusterDetails(ctx, clients.EKS, "missing", given); err != nil || got.Endpoint != "https://x" {
		t.Errorf("with every flag set: %+v, %v; want the flags and no call", got, err)
	}
}
