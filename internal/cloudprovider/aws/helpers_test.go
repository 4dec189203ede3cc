package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/stratos-sh/stratos/internal/sim/moto"
)

// testCluster is the cluster name of every test's provider.
const testCluster = "test-cluster"

// newTestClients starts a moto_server for the test and returns clients pointed at it,
// with static credentials from the environment as the SDK's default chain reads them.
func newTestClients(t *testing.T) (*Clients, *moto.Server) {
	t.Helper()
	server := moto.StartT(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	clients, err := NewClients(context.Background(), Options{Region: moto.Region, Endpoint: server.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return clients, server
}

func TestClientsReachMoto(t *testing.T) {
	clients, _ := newTestClients(t)
	pages := ec2.NewDescribeInstanceTypesPaginator(clients.EC2, &ec2.DescribeInstanceTypesInput{MaxResults: int32Ptr(100)})
	count, calls := 0, 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		calls++
		count += len(page.InstanceTypes)
	}
	// moto answers DescribeInstanceTypes in one page whatever MaxResults says; the
	// paginator still must follow it to the end.
	if calls < 1 || count < 500 {
		t.Fatalf("described %d instance types in %d pages; want the emulator's whole catalogue", count, calls)
	}
}

func int32Ptr(v int32) *int32 { return &v }
