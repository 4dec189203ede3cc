package aws

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// testSSMRoot is where the tests publish image aliases: moto refuses parameters under /aws.
const testSSMRoot = "/test/service"

// testKubernetesVersion is the cluster version the tests' aliases are published for.
const testKubernetesVersion = "1.37"

// motoImage is an image moto_server loads at start (MOTO_AMIS_PATH), with the fields
// its loader reads: the tests need known creation dates, architectures and owners,
// which images made through the API would not have.
type motoImage struct {
	ID           string            `json:"ami_id"`
	Name         string            `json:"name"`
	Architecture string            `json:"architecture"`
	OwnerID      string            `json:"owner_id"`
	CreationDate string            `json:"creation_date"`
	State        string            `json:"state"`
	Public       bool              `json:"public"`
	Tags         map[string]string `json:"tags,omitempty"`
}

// motoAccount is the account moto answers as.
const motoAccount = "123456789012"

// newTestResolver starts moto_server with images and returns a resolver over it for
// the test cluster, its aliases read under testSSMRoot for testKubernetesVersion.
func newTestResolver(t *testing.T, images ...motoImage) (*Resolver, *Clients) {
	t.Helper()
	for i := range images {
		if images[i].State == "" {
			images[i].State = "available"
		}
		if images[i].OwnerID == "" {
			images[i].OwnerID = motoAccount
		}
	}
	if images == nil {
		images = []motoImage{} // moto's loader wants a list
	}
	data, err := json.Marshal(images)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "amis.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MOTO_AMIS_PATH", path)
	clients, _ := newTestClients(t)
	opts := Options{ClusterName: testCluster, KubernetesVersion: testKubernetesVersion, SSMParameterRoot: testSSMRoot}
	return NewResolver(opts, clients), clients
}

// putParameter publishes an SSM parameter, as AWS publishes image aliases.
func putParameter(t *testing.T, clients *Clients, name, value string) {
	t.Helper()
	_, err := clients.SSM.PutParameter(context.Background(), &ssm.PutParameterInput{
		Name: aws.String(name), Value: aws.String(value), Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true)})
	if err != nil {
		t.Fatalf("putting SSM parameter %s: %v", name, err)
	}
}

// awsClass is an EC2NodeClass with the given selectors and role.
func awsClass(name string, amis []v1beta1.AMISelectorTerm, subnets []v1beta1.SubnetSelectorTerm, groups []v1beta1.SecurityGroupSelectorTerm) *v1beta1.EC2NodeClass {
	return &v1beta1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.EC2NodeClassSpec{
			AMISelectorTerms: amis, SubnetSelectorTerms: subnets, SecurityGroupSelectorTerms: groups,
		},
	}
}

func TestAWSFailuresTellTransientErrorsFromTheClassesOwn(t *testing.T) {
	cases := []struct {
		err       error
		transient bool
		message   string
	}{
		{&smithy.GenericAPIError{Code: "Throttling", Message: "Rate exceeded"}, true, "describing subnets: Throttling: Rate exceeded"},
		{&smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "slow down"}, true, "describing subnets: RequestLimitExceeded: slow down"},
		{&smithy.GenericAPIError{Code: "RequestTimeout", Message: "too slow"}, true, "describing subnets: RequestTimeout: too slow"},
		{&smithy.GenericAPIError{Code: "UnauthorizedOperation", Message: "not allowed"}, false, "describing subnets: UnauthorizedOperation: not allowed"},
		{&smithy.GenericAPIError{Code: "AccessDenied", Message: "no"}, false, "describing subnets: AccessDenied: no"},
		{context.DeadlineExceeded, true, "describing subnets: context deadline exceeded"},
		{errors.New("something else"), false, "describing subnets: something else"},
	}
	for _, c := range cases {
		f := awsFailure(PartSubnets, "describing subnets", c.err)
		if f.Reason != ReasonAWSError || f.Part != PartSubnets || f.Transient != c.transient || f.Message != c.message {
			t.Errorf("awsFailure(%v) = %+v; want AWSError of subnets, transient %v, message %q", c.err, f, c.transient, c.message)
		}
	}
}

// One part that does not resolve does not keep the others from resolving, and each
// failure names its part and reason.
func TestResolveReportsEachPartOnItsOwn(t *testing.T) {
	r, clients := newTestResolver(t, motoImage{ID: "ami-0a000000000000001", Name: "node", Architecture: "x86_64", CreationDate: "2025-01-01T00:00:00.000Z"})
	vpc := createVPC(t, clients)
	subnet := createSubnet(t, clients, vpc, "10.0.1.0/24", "us-east-1a", map[string]string{"team": "a"})
	class := awsClass("mixed",
		[]v1beta1.AMISelectorTerm{{ID: "ami-0a000000000000001"}},
		[]v1beta1.SubnetSelectorTerm{{Tags: map[string]string{"team": "a"}}},
		[]v1beta1.SecurityGroupSelectorTerm{{Tags: map[string]string{"team": "nobody"}}})
	class.Spec.InstanceProfile = "missing-profile"

	res := r.Resolve(context.Background(), class)
	if len(res.AMIs) != 1 || res.AMIs[0].ID != "ami-0a000000000000001" {
		t.Errorf("AMIs = %+v; want the image selected by ID", res.AMIs)
	}
	if len(res.Subnets) != 1 || res.Subnets[0].ID != subnet {
		t.Errorf("subnets = %+v; want %s", res.Subnets, subnet)
	}
	if res.Failure(PartAMIs) != nil || res.Failure(PartSubnets) != nil {
		t.Errorf("failures %v; the images and subnets resolved", res.Failures)
	}
	if f := res.Failure(PartSecurityGroups); f == nil || f.Reason != ReasonSecurityGroupsNotFound || f.Transient {
		t.Errorf("security groups failure = %+v; want SecurityGroupsNotFound", f)
	}
	if f := res.Failure(PartInstanceProfile); f == nil || f.Reason != ReasonInstanceProfileNotFound || !strings.Contains(f.Message, "missing-profile") {
		t.Errorf("instance profile failure = %+v; want InstanceProfileNotFound naming missing-profile", f)
	}
	if len(res.Failures) != 2 || res.Failures[0].Part != PartSecurityGroups {
		t.Errorf("failures = %v; want security groups then instance profile", res.Failures)
	}
}
