package aws

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// spec.amiFamily says what images selected by ID, name or tags are; an alias says it on
// its own, and a declared family must agree with it.
func TestAMIFamilyDecidesTheResolvedFamily(t *testing.T) {
	r, clients := newTestResolver(t,
		motoImage{ID: "ami-0d0d0000000000001", Name: "my-bottlerocket", Architecture: "x86_64", CreationDate: "2025-01-01T00:00:00.000Z"},
		motoImage{ID: "ami-0d0d0000000000002", Name: "my-al2023", Architecture: "arm64", CreationDate: "2025-01-01T00:00:00.000Z"},
	)
	byID := []v1beta1.AMISelectorTerm{{ID: "ami-0d0d0000000000001"}}
	for _, c := range []struct {
		amiFamily, want string
	}{
		{"", FamilyCustom},
		{v1beta1.AMIFamilyCustom, FamilyCustom},
		{v1beta1.AMIFamilyAL2023, FamilyAL2023},
		{v1beta1.AMIFamilyBottlerocket, FamilyBottlerocket},
	} {
		amis, failure := r.resolveAMIs(context.Background(), byID, c.amiFamily)
		if failure != nil || len(amis) != 1 || amis[0].Family != c.want || amis[0].ID != "ami-0d0d0000000000001" {
			t.Errorf("image by ID with amiFamily %q resolved to %+v, %v; want it as %s", c.amiFamily, amis, failure, c.want)
		}
	}

	// An alias's family, agreed to or left to the alias.
	putParameter(t, clients, testSSMRoot+"/bottlerocket/aws-k8s-"+testKubernetesVersion+"/x86_64/latest/image_id", "ami-0d0d0000000000001")
	alias := []v1beta1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}
	for _, amiFamily := range []string{"", v1beta1.AMIFamilyBottlerocket} {
		amis, failure := r.resolveAMIs(context.Background(), alias, amiFamily)
		if failure != nil || len(amis) != 1 || amis[0].Family != FamilyBottlerocket {
			t.Errorf("bottlerocket@latest with amiFamily %q resolved to %+v, %v; want a Bottlerocket image", amiFamily, amis, failure)
		}
	}
	// Disagreeing (which the API refuses; an object from before the rule could hold it).
	for _, amiFamily := range []string{v1beta1.AMIFamilyAL2023, v1beta1.AMIFamilyCustom} {
		_, failure := r.resolveAMIs(context.Background(), alias, amiFamily)
		if failure == nil || failure.Reason != ReasonAMINotFound || !strings.Contains(failure.Message, "disagrees with alias bottlerocket@latest") {
			t.Errorf("bottlerocket@latest with amiFamily %s failed with %+v; want a failure naming the disagreement", amiFamily, failure)
		}
	}
	if _, failure := r.resolveAMIs(context.Background(), byID, "AL2"); failure == nil || !strings.Contains(failure.Message, `spec.amiFamily "AL2" is none of AL2023, Bottlerocket and Custom`) {
		t.Errorf("amiFamily AL2 failed with %+v; want a failure naming the families Stratos takes", failure)
	}
}

// The user data's form follows the resolved family, and for a custom image whether
// spec.amiFamily says Custom (as it is) or is unset (nodeadm's NodeConfig, as before).
func TestUserDataFormFollowsTheFamily(t *testing.T) {
	cases := []struct {
		family, amiFamily string
		want              userDataForm
	}{
		{FamilyAL2023, "", formNodeadm},
		{FamilyAL2023, v1beta1.AMIFamilyAL2023, formNodeadm},
		{FamilyBottlerocket, "", formBottlerocket},
		{FamilyBottlerocket, v1beta1.AMIFamilyBottlerocket, formBottlerocket},
		{FamilyCustom, "", formNodeadm},
		{FamilyCustom, v1beta1.AMIFamilyCustom, formAsIs},
	}
	for _, c := range cases {
		class := &v1beta1.EC2NodeClass{
			Spec:   v1beta1.EC2NodeClassSpec{AMIFamily: c.amiFamily},
			Status: v1beta1.EC2NodeClassStatus{AMIs: []v1beta1.ResolvedAMI{{ID: "ami-1", Architecture: "amd64", Family: c.family}}},
		}
		if got := userDataFormOf(class); got != c.want {
			t.Errorf("family %s, amiFamily %q: form %d, want %d", c.family, c.amiFamily, got, c.want)
		}
	}
}

// A custom image selected by ID and declared Bottlerocket resolves as Bottlerocket and
// its nodes get Bottlerocket's settings, the class's own merged, as an alias's would.
func TestCustomImageDeclaredBottlerocketGetsBottlerocketSettings(t *testing.T) {
	r, _ := newTestResolver(t, motoImage{ID: "ami-0e0e0000000000001", Name: "hardened-bottlerocket", Architecture: "x86_64", CreationDate: "2025-01-01T00:00:00.000Z"})
	own := `[settings.host-containers.admin]
enabled = true

[settings.kubernetes.node-labels]
team = "platform"
`
	class := awsClass("custom-bottlerocket", []v1beta1.AMISelectorTerm{{ID: "ami-0e0e0000000000001"}}, nil, nil)
	class.Spec.AMIFamily = v1beta1.AMIFamilyBottlerocket
	class.Spec.UserData = &own
	amis, failure := r.resolveAMIs(context.Background(), class.Spec.AMISelectorTerms, class.Spec.AMIFamily)
	if failure != nil {
		t.Fatal(failure)
	}
	class.Status.AMIs = amis
	doc, err := nodeUserData(class, testJoin())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "bottlerocket-custom-image.toml", doc)
	// Its pods' storage is Bottlerocket's data volume, /dev/xvdb, not the OS volume.
	size := resource.MustParse("100Gi")
	class.Spec.BlockDeviceMappings = []v1beta1.BlockDeviceMapping{{DeviceName: "/dev/xvdb", EBS: v1beta1.BlockDevice{VolumeSize: &size}}}
	if got := ephemeralStorage(class); got.Cmp(size) != 0 {
		t.Errorf("a custom image declared Bottlerocket has %s of ephemeral storage; want /dev/xvdb's %s", got.String(), size.String())
	}
}

// A custom image declared Custom gets spec.userData byte for byte, nothing added; one
// with no amiFamily still gets nodeadm's NodeConfig after it.
func TestCustomImageUserDataIsPassedAsIs(t *testing.T) {
	own := "#!/bin/bash\n/opt/my-bootstrap --cluster prod\n"
	class := &v1beta1.EC2NodeClass{
		Spec:   v1beta1.EC2NodeClassSpec{AMIFamily: v1beta1.AMIFamilyCustom, UserData: &own},
		Status: v1beta1.EC2NodeClassStatus{AMIs: []v1beta1.ResolvedAMI{{ID: "ami-1", Architecture: "amd64", Family: FamilyCustom}}},
	}
	doc, err := nodeUserData(class, testJoin())
	if err != nil || doc != own {
		t.Fatalf("Custom user data %q, %v; want spec.userData as it is", doc, err)
	}
	class.Spec.UserData = nil
	if doc, err := nodeUserData(class, testJoin()); err != nil || doc != "" {
		t.Fatalf("Custom without user data gave %q, %v; want none", doc, err)
	}
	if data := templateData(class, ""); data.UserData != nil {
		t.Fatalf("the launch template of a Custom class without user data carries %q; want none", *data.UserData)
	}
	class.Spec.AMIFamily = ""
	class.Spec.UserData = &own
	doc, err = nodeUserData(class, testJoin())
	if err != nil {
		t.Fatal(err)
	}
	types, bodies := readParts(t, doc)
	if len(types) != 2 || types[0] != contentTypeShellScript || bodies[0] != own || types[1] != contentTypeNodeConfig {
		t.Fatalf("a custom image without amiFamily got parts %v; want the script then nodeadm's NodeConfig", types)
	}
}
