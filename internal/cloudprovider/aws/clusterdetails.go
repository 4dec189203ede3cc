package aws

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
)

// ResolveClusterDetails completes given with what eks:DescribeCluster says of the
// cluster called name: the fields set (by flags) win, and DescribeCluster is called only
// when one is missing.
func ResolveClusterDetails(ctx context.Context, client *eks.Client, name string, given ClusterDetails) (ClusterDetails, error) {
	if given.Endpoint != "" && len(given.CertificateAuthority) > 0 && given.ServiceCIDR != "" {
		return given, nil
	}
	out, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		return given, fmt.Errorf("eks:DescribeCluster %s, for what nodes need to join (or set --cluster-endpoint, --cluster-ca-file and --cluster-service-cidr): %w", name, err)
	}
	c := out.Cluster
	if given.Endpoint == "" {
		given.Endpoint = aws.ToString(c.Endpoint)
	}
	if len(given.CertificateAuthority) == 0 && c.CertificateAuthority != nil {
		ca, err := base64.StdEncoding.DecodeString(aws.ToString(c.CertificateAuthority.Data))
		if err != nil {
			return given, fmt.Errorf("eks:DescribeCluster %s: the certificate authority is not base64: %w", name, err)
		}
		given.CertificateAuthority = ca
	}
	if given.ServiceCIDR == "" && c.KubernetesNetworkConfig != nil {
		given.ServiceCIDR = aws.ToString(c.KubernetesNetworkConfig.ServiceIpv4Cidr)
		if given.ServiceCIDR == "" {
			given.ServiceCIDR = aws.ToString(c.KubernetesNetworkConfig.ServiceIpv6Cidr)
		}
	}
	if given.Endpoint == "" || len(given.CertificateAuthority) == 0 {
		return given, fmt.Errorf("eks:DescribeCluster %s gave no endpoint or certificate authority (is the cluster still being created?)", name)
	}
	return given, nil
}
