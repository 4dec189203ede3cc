package aws

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/sim/moto"
)

// ec2Env is a moto EC2 with a VPC, a subnet in each of two zones, a security group, an
// image per architecture, an EC2NodeClass whose status is resolved to them, and a
// provider of testCluster. Its clients go through a proxy that records every request
// and can answer some with errors moto never gives.
type ec2Env struct {
	clients *Clients
	proxy   *ec2Proxy
	cloud   *Cloud
	class   *v1beta1.EC2NodeClass
	// subnets by zone and images by architecture.
	subnets map[string]string
	amis    map[string]string
}

// Zones of the test VPC.
const (
	zoneA = "us-east-1a"
	zoneB = "us-east-1b"
)

func newEC2Env(t *testing.T) *ec2Env {
	t.Helper()
	direct, server := newTestClients(t)
	proxy := newEC2Proxy(t, server)
	clients, err := NewClients(context.Background(), Options{Region: moto.Region, Endpoint: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := &ec2Env{clients: clients, proxy: proxy, subnets: map[string]string{}, amis: map[string]string{}}
	ctx := context.Background()
	vpc, err := direct.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	if err != nil {
		t.Fatal(err)
	}
	for i, zone := range []string{zoneA, zoneB} {
		subnet, err := direct.EC2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, AvailabilityZone: aws.String(zone), CidrBlock: aws.String(fmt.Sprintf("10.0.%d.0/24", i+1))})
		if err != nil {
			t.Fatal(err)
		}
		e.subnets[zone] = aws.ToString(subnet.Subnet.SubnetId)
	}
	sg, err := direct.EC2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nodes"), Description: aws.String("nodes"), VpcId: vpc.Vpc.VpcId})
	if err != nil {
		t.Fatal(err)
	}
	// moto serves Amazon's public images; one of each architecture will do.
	images, err := direct.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range images.Images {
		arch := kubernetesArchitecture(img.Architecture)
		if _, ok := e.amis[arch]; !ok && (arch == "amd64" || arch == "arm64") {
			e.amis[arch] = aws.ToString(img.ImageId)
		}
	}
	if len(e.amis) != 2 {
		t.Fatalf("moto has no image of each architecture: %v", e.amis)
	}
	e.class = &v1beta1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1beta1.EC2NodeClassSpec{
			InstanceProfile: "nodes",
			Tags:            map[string]string{"team": "platform"},
			MetadataOptions: v1beta1.MetadataOptions{HTTPEndpoint: "enabled", HTTPTokens: "required", HTTPPutResponseHopLimit: 1},
		},
		Status: v1beta1.EC2NodeClassStatus{
			AMIs: []v1beta1.ResolvedAMI{
				{ID: e.amis["amd64"], Architecture: "amd64"},
				{ID: e.amis["arm64"], Architecture: "arm64"},
			},
			Subnets: []v1beta1.ResolvedSubnet{
				{ID: e.subnets[zoneA], Zone: zoneA},
				{ID: e.subnets[zoneB], Zone: zoneB},
			},
			SecurityGroups:  []v1beta1.ResolvedSecurityGroup{{ID: aws.ToString(sg.GroupId), Name: "nodes"}},
			InstanceProfile: "nodes",
		},
	}
	e.cloud = New(Options{ClusterName: testCluster}, clients)
	return e
}

// runInstances starts n instances of type in zone, each in a reservation of its own,
// tagged with tags, and returns their IDs.
func (e *ec2Env) runInstances(t *testing.T, n int, instanceType, zone string, tags map[string]string, extra ...func(*ec2.RunInstancesInput)) []string {
	t.Helper()
	var ids []string
	for range n {
		input := &ec2.RunInstancesInput{
			ImageId: aws.String(e.amis["amd64"]), InstanceType: types.InstanceType(instanceType),
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(e.subnets[zone]),
			TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeInstance, Tags: ec2Tags(tags)}},
		}
		for _, f := range extra {
			f(input)
		}
		out, err := e.clients.EC2.RunInstances(context.Background(), input)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, aws.ToString(out.Instances[0].InstanceId))
	}
	return ids
}

// state is what EC2 says of an instance's state, read without the provider.
func (e *ec2Env) state(t *testing.T, id string) types.InstanceStateName {
	t.Helper()
	out, err := e.clients.EC2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Reservations[0].Instances[0].State.Name
}

// ours are the ownership tags of an instance of testCluster.
func ours(pool string) map[string]string {
	return map[string]string{v1beta1.TagCluster: testCluster, v1beta1.TagNodePool: pool}
}

// testInstanceTypes are hand-made instance types with offerings in both zones: amd64
// m5.large and m5.xlarge, arm64 m6g.large; spot at a third of on-demand.
func testInstanceTypes() []*cloudprovider.InstanceType {
	mk := func(name, arch string, cpu, memGi int64, price float64) *cloudprovider.InstanceType {
		t := &cloudprovider.InstanceType{
			Name:         name,
			Architecture: arch,
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(memGi<<30, resource.BinarySI),
				corev1.ResourcePods:   *resource.NewQuantity(29, resource.DecimalSI),
			},
		}
		for _, zone := range []string{zoneA, zoneB} {
			t.Offerings = append(t.Offerings,
				cloudprovider.Offering{Zone: zone, CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: price, Available: true},
				cloudprovider.Offering{Zone: zone, CapacityType: v1beta1.CapacityTypeSpot, PricePerHour: price / 3, Available: true})
		}
		return t
	}
	return []*cloudprovider.InstanceType{
		mk("m5.large", "amd64", 2, 8, 0.096),
		mk("m5.xlarge", "amd64", 4, 16, 0.192),
		mk("m6g.large", "arm64", 2, 8, 0.077),
	}
}

// ec2Proxy stands between the provider and moto: it records the form of every request
// and answers with an EC2 error those fault picks.
type ec2Proxy struct {
	*httptest.Server
	mu       sync.Mutex
	requests []url.Values
	fault    func(form url.Values) *ec2Fault
	// rewrite, when set, changes moto's answer to a request before the client reads it,
	// for what moto answers differently from EC2 (see rewriteAnswers).
	rewrite func(form url.Values, body string) string
}

// ec2Fault is an error answer: an HTTP status and an EC2 error code and message, or a
// whole body to answer with status 200.
type ec2Fault struct {
	status        int
	code, message string
	body          string
}

func newEC2Proxy(t *testing.T, server *moto.Server) *ec2Proxy {
	target, err := url.Parse(server.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	p := &ec2Proxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form, _ := url.ParseQuery(string(body))
		p.mu.Lock()
		p.requests = append(p.requests, form)
		fault, rewrite := p.fault, p.rewrite
		p.mu.Unlock()
		if fault != nil {
			if f := fault(form); f != nil {
				if f.body != "" {
					w.Header().Set("Content-Type", "text/xml")
					_, _ = io.WriteString(w, f.body)
					return
				}
				writeEC2Error(w, f.status, f.code, f.message)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if rewrite == nil {
			forward.ServeHTTP(w, r)
			return
		}
		answer := httptest.NewRecorder()
		forward.ServeHTTP(answer, r)
		for k, v := range answer.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(answer.Code)
		_, _ = io.WriteString(w, rewrite(form, answer.Body.String()))
	}))
	t.Cleanup(p.Close)
	return p
}

// setFault answers the requests fault picks with its error until the test ends; nil
// passes all to moto.
func (p *ec2Proxy) setFault(t *testing.T, fault func(form url.Values) *ec2Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = fault
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.fault = nil
	})
}

// rewriteAnswers passes moto's answers through rewrite until the test ends.
func (p *ec2Proxy) rewriteAnswers(t *testing.T, rewrite func(form url.Values, body string) string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rewrite = rewrite
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.rewrite = nil
	})
}

// since returns the forms of the requests after the first mark ones, in order.
func (p *ec2Proxy) since(mark int) []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]url.Values(nil), p.requests[mark:]...)
}

// mark is the number of requests so far.
func (p *ec2Proxy) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

// writeEC2Error answers as EC2 does when it refuses a request.
func writeEC2Error(w http.ResponseWriter, status int, code, message string) {
	var escaped strings.Builder
	_ = xml.EscapeText(&escaped, []byte(message))
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>test-request-1</RequestID></Response>`, code, escaped.String())
}

// formIDs are the InstanceId.N values of a request's form.
func formIDs(form url.Values) []string {
	var ids []string
	for i := 1; ; i++ {
		id := form.Get(fmt.Sprintf("InstanceId.%d", i))
		if id == "" {
			return ids
		}
		ids = append(ids, id)
	}
}

// awsCalls reads stratos_aws_api_calls_total for EC2 as "Operation code" → count.
func awsCalls(t *testing.T) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	metrics.AWSAPICalls.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["service"] == "EC2" {
			out[labels["operation"]+" "+labels["code"]] += pb.GetCounter().GetValue()
		}
	}
	return out
}

// callsSince returns the EC2 calls counted since before, by "Operation code", and
// by operation alone.
func callsSince(t *testing.T, before map[string]float64) (byCode, byOperation map[string]int) {
	t.Helper()
	byCode, byOperation = map[string]int{}, map[string]int{}
	for key, v := range awsCalls(t) {
		if n := int(v - before[key]); n > 0 {
			byCode[key] = n
			byOperation[strings.Fields(key)[0]] += n
		}
	}
	return byCode, byOperation
}
