package aws

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/pelletier/go-toml/v2"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A custom image registered in the account, selected by ID and declared Bottlerocket,
// resolves as Bottlerocket and launches with Bottlerocket settings, not nodeadm's MIME.
func launchCustomImageDeclaredBottlerocket(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	// A team's image made from a running instance, as an image pipeline makes one (moto's
	// RegisterImage records no architecture).
	builder := e.runInstances(t, 1, "m5.large", zoneA, map[string]string{"purpose": "image-build"})[0]
	made, err := e.clients.EC2.CreateImage(ctx, &ec2.CreateImageInput{InstanceId: aws.String(builder), Name: aws.String("hardened-bottlerocket-1")})
	if err != nil {
		t.Fatal(err)
	}
	image := aws.ToString(made.ImageId)
	if _, err := e.clients.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{builder}}); err != nil {
		t.Fatal(err)
	}

	class := e.class.DeepCopy()
	class.Name = "custom-bottlerocket"
	class.Spec.AMISelectorTerms = []v1beta1.AMISelectorTerm{{ID: image}}
	class.Spec.AMIFamily = v1beta1.AMIFamilyBottlerocket
	amis, failure := NewResolver(Options{ClusterName: testCluster}, e.clients).resolveAMIs(ctx, class.Spec.AMISelectorTerms, class.Spec.AMIFamily)
	if failure != nil || len(amis) != 1 || amis[0].ID != image || amis[0].Family != FamilyBottlerocket {
		t.Fatalf("the registered image resolved to %+v, %v; want %s as bottlerocket", amis, failure, image)
	}
	class.Status.AMIs = amis

	mark := e.proxy.mark()
	req := launchRequest(e, "custom-bottlerocket-1")
	req.NodeClass = class
	if _, err := e.cloud.launch(ctx, req, testInstanceTypes()); err != nil {
		t.Fatal(err)
	}
	form := createFleetForm(t, e.proxy.since(mark))
	var template string
	for key, values := range form {
		if strings.HasSuffix(key, ".LaunchTemplateSpecification.LaunchTemplateName") {
			template = values[0]
		}
		if overrideKey.MatchString(key) {
			if m := overrideKey.FindStringSubmatch(key); form.Get("LaunchTemplateConfigs."+m[1]+".Overrides."+m[2]+".ImageId") != image {
				t.Errorf("override of %s does not name the registered image %s", values[0], image)
			}
		}
	}
	versions, err := e.clients.EC2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(template)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(versions.LaunchTemplateVersions[0].LaunchTemplateData.UserData))
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		Settings struct {
			Kubernetes struct {
				ClusterName string              `toml:"cluster-name"`
				NodeTaints  map[string][]string `toml:"node-taints"`
			} `toml:"kubernetes"`
		} `toml:"settings"`
	}
	if err := toml.Unmarshal(raw, &settings); err != nil {
		t.Fatalf("the template's user data is not Bottlerocket's settings TOML: %v\n%s", err, raw)
	}
	k := settings.Settings.Kubernetes
	if k.ClusterName != testCluster || len(k.NodeTaints[v1beta1.StandbyTaint.Key]) != 1 {
		t.Fatalf("settings.kubernetes: cluster %q, taints %v; want %s and the standby taint", k.ClusterName, k.NodeTaints, testCluster)
	}
}
