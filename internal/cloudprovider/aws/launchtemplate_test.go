package aws

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/ec2machines"
)

func launchTemplateCarriesTheNodeClassAndUserData(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	mark := e.proxy.mark()
	req := launchRequest(e, "template-1")
	if _, err := e.cloud.launch(ctx, req, testInstanceTypes()); err != nil {
		t.Fatal(err)
	}
	form := createFleetForm(t, e.proxy.since(mark))
	names := map[string]bool{}
	for key, values := range form {
		if strings.HasSuffix(key, ".LaunchTemplateSpecification.LaunchTemplateName") {
			names[values[0]] = true
		}
	}
	if len(names) != 1 {
		t.Fatalf("launch templates %v, want one for both architectures", names)
	}
	for name := range names {
		if !strings.HasPrefix(name, "stratos/"+testCluster+"/") {
			t.Fatalf("launch template %q is not named stratos/<cluster>/<hash>", name)
		}
		templates, err := e.clients.EC2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
		if err != nil {
			t.Fatal(err)
		}
		if tags := tagMap(templates.LaunchTemplates[0].Tags); tags[v1beta1.TagCluster] != testCluster {
			t.Fatalf("launch template %s tagged %v, want the cluster's tag", name, tags)
		}
		versions, err := e.clients.EC2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		data := versions.LaunchTemplateVersions[0].LaunchTemplateData
		if aws.ToString(data.IamInstanceProfile.Name) != "nodes" || !slices.Equal(data.SecurityGroupIds, []string{e.class.Status.SecurityGroups[0].ID}) {
			t.Fatalf("template %s: instance profile %v, security groups %v", name, data.IamInstanceProfile, data.SecurityGroupIds)
		}
		if m := data.MetadataOptions; m == nil || m.HttpTokens != "required" || aws.ToInt32(m.HttpPutResponseHopLimit) != 1 {
			t.Fatalf("template %s: metadata options %+v", name, m)
		}
		flags := nodeConfigFlags(t, aws.ToString(data.UserData))
		wantFlags := []string{
			"--node-labels=stratos.sh/nodepool=default",
			"--register-with-taints=stratos.sh/standby:NoSchedule,dedicated=gpu:NoSchedule",
		}
		if !slices.Equal(flags, wantFlags) {
			t.Fatalf("kubelet flags %q, want %q", flags, wantFlags)
		}
	}
	// Each override names the image of its type's architecture.
	for key, values := range form {
		if m := overrideKey.FindStringSubmatch(key); m != nil {
			image := form.Get(fmt.Sprintf("LaunchTemplateConfigs.%s.Overrides.%s.ImageId", m[1], m[2]))
			if want := map[string]string{"m5.large": e.amis["amd64"], "m5.xlarge": e.amis["amd64"], "m6g.large": e.amis["arm64"]}[values[0]]; image != want {
				t.Fatalf("override of %s names image %s, want %s", values[0], image, want)
			}
		}
	}
}

// nodeConfigFlags reads the kubelet flags of the NodeConfig part of base64 user data,
// with the standard library's MIME reader.
func nodeConfigFlags(t *testing.T, encoded string) []string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	parts := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := parts.NextPart()
		if err != nil {
			t.Fatalf("no application/node.eks.aws part: %v", err)
		}
		if part.Header.Get("Content-Type") != "application/node.eks.aws" {
			continue
		}
		body, _ := io.ReadAll(part)
		var config struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Spec       struct {
				Kubelet struct {
					Flags []string `json:"flags"`
				} `json:"kubelet"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(body, &config); err != nil {
			t.Fatal(err)
		}
		if config.APIVersion != "node.eks.aws/v1alpha1" || config.Kind != "NodeConfig" {
			t.Fatalf("NodeConfig part is a %s %s", config.APIVersion, config.Kind)
		}
		return config.Spec.Kubelet.Flags
	}
}

// A launch template deleted behind Stratos's back fails one launch, retryably; the next
// makes it again.
func launchTemplateDeletedOutsideIsMadeAgain(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	mark := e.proxy.mark()
	if _, err := e.cloud.launch(ctx, launchRequest(e, "deleted-1"), testInstanceTypes()); err != nil {
		t.Fatal(err)
	}
	name := createFleetForm(t, e.proxy.since(mark)).Get("LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName")
	if _, err := e.clients.EC2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
	req := launchRequest(e, "deleted-2")
	req.Labels = launchRequest(e, "deleted-1").Labels // the same content, so the same template
	_, err := e.cloud.launch(ctx, req, testInstanceTypes())
	if !cloudprovider.IsRetryable(err) || !strings.Contains(err.Error(), name) {
		t.Fatalf("launch error %v, want a retryable error naming the template", err)
	}
	before := awsCalls(t)
	if _, err := e.cloud.launch(ctx, req, testInstanceTypes()); err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	wantCalls(t, "the launch after", calls, map[string]int{"DescribeInstances": 1, "CreateLaunchTemplate": 1, "CreateFleet": 1})
}

// A burst of 50 launches at once, then the 50 stopped, started and terminated in one
// batch each: the EC2 calls it takes, by operation.
func burstOfFifty(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	const n = 50
	before := awsCalls(t)
	ids := make([]string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := launchRequest(e, fmt.Sprintf("burst-%02d", i))
			req.Labels[v1beta1.LabelNodePool] = "burst" // a pool no earlier test launched for
			inst, err := e.cloud.launch(ctx, req, testInstanceTypes())
			if err != nil {
				errs <- err
				return
			}
			ids[i] = inst.ID
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_, launches := callsSince(t, before)
	// Each launch looks for an earlier instance of its claim and launches; the claims of
	// one pool share one template (the claim's name is not in the user data), made once.
	wantCalls(t, "50 launches", launches, map[string]int{"DescribeInstances": n, "CreateLaunchTemplate": 1, "CreateFleet": n})

	for _, step := range []struct {
		op  string
		act func(context.Context, []string) (map[string]error, error)
	}{
		{"StopInstances", func(ctx context.Context, ids []string) (map[string]error, error) {
			return e.cloud.StopInstances(ctx, ids, false)
		}},
		{"StartInstances", e.cloud.StartInstances},
		{"TerminateInstances", e.cloud.TerminateInstances},
	} {
		before := awsCalls(t)
		results, err := step.act(ctx, ids)
		if err != nil || len(results) != 0 {
			t.Fatalf("%s: %v, %v", step.op, results, err)
		}
		_, calls := callsSince(t, before)
		wantCalls(t, step.op+" of 50", calls, map[string]int{"DescribeInstances": 1, step.op: 1})
	}
}

// Claims that differ only in their kubelet configuration launch from two templates,
// each carrying its configuration in its user data; the claims of one configuration
// share its template, made once.
func launchTemplatePerKubeletConfiguration(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	launch := func(claim, pool string, kubelet *v1beta1.KubeletConfiguration) (string, map[string]int) {
		t.Helper()
		req := launchRequest(e, claim)
		req.Labels[v1beta1.LabelNodePool] = pool
		req.Kubelet = kubelet
		mark, before := e.proxy.mark(), awsCalls(t)
		if _, err := e.cloud.launch(ctx, req, testInstanceTypes()); err != nil {
			t.Fatal(err)
		}
		_, calls := callsSince(t, before)
		return createFleetForm(t, e.proxy.since(mark)).Get("LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName"), calls
	}
	newTemplate := map[string]int{"DescribeInstances": 1, "CreateLaunchTemplate": 1, "CreateFleet": 1}
	knownTemplate := map[string]int{"DescribeInstances": 1, "CreateFleet": 1}

	// Labels of their own, so that the templates are this test's; the third claim differs
	// from the first two in its kubelet configuration only.
	dense, calls := launch("kubelet-1", "dense", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](110)})
	wantCalls(t, "the first launch of a kubelet configuration", calls, newTemplate)
	again, calls := launch("kubelet-2", "dense", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](110)})
	wantCalls(t, "another claim of the same configuration", calls, knownTemplate)
	sparse, calls := launch("kubelet-3", "dense", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](20)})
	wantCalls(t, "a claim of the same labels with another configuration", calls, newTemplate)
	if again != dense || sparse == dense {
		t.Fatalf("templates %s, %s (same configuration) and %s (another): want the first two one and the third another", dense, again, sparse)
	}

	// The configuration travels in each template's user data, as a node reads it.
	for name, want := range map[string]int64{dense: 110, sparse: 20} {
		versions, err := e.clients.EC2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := ec2machines.ParseUserData(aws.ToString(versions.LaunchTemplateVersions[0].LaunchTemplateData.UserData))
		if err != nil {
			t.Fatal(err)
		}
		if got := reg.Kubelet.MaxPods; got == nil || *got != want {
			t.Errorf("template %s: max pods %v, want %d", name, got, want)
		}
	}
}
