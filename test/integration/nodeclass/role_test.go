package nodeclass_test

import (
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
	"github.com/stratos-sh/stratos/internal/controllers/ec2nodeclass"
)

// A role change never touches the instance profile the nodes hold. A role that does not
// exist leaves the old profile with its role and the class's status naming it, and the
// class says so (Ready False, RoleNotFound) with a Warning Event. A role that exists gets
// a profile of its own, which launches use from then on; the old one stays while a claim
// (here a standby node, whose instance needs it at its next start) holds it, and goes
// once that claim is gone.
//
// On main before the change, the role was taken off the class's one profile before the
// new one was added: this test, its names adapted (InstanceProfileName without the role),
// failed at "after a role that does not exist, the old profile holds []; want [nodes]"
// and "status.instanceProfile = \"\"; want the old".
func TestARoleChangeLeavesTheProfileNodesHoldUntilNoClaimHoldsIt(t *testing.T) {
	f := newFixture(t, ec2nodeclass.Options{}, nil)
	f.create(class("default"))
	f.eventually("default is Ready", func() bool {
		c := f.ready("default")
		return c != nil && c.Status == metav1.ConditionTrue
	})
	old := f.get("default").Status.InstanceProfile
	if want := aws.InstanceProfileName(clusterName, f.clients.Region, "default", "nodes"); old != want {
		t.Fatalf("status.instanceProfile = %q; want %q", old, want)
	}
	standby := f.claimHolding("web-standby", "default", old)

	f.setRole("default", "no-such-role")
	f.eventually("default says its role does not exist", func() bool {
		c, gen := f.ready("default"), f.get("default").Generation
		return c.Status == metav1.ConditionFalse && c.Reason == aws.ReasonRoleNotFound && c.ObservedGeneration == gen
	})
	if got := f.roles(old); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("after a role that does not exist, the old profile holds %v; want [nodes]", got)
	}
	if got := f.get("default").Status.InstanceProfile; got != old {
		t.Errorf("after a role that does not exist, status.instanceProfile = %q; want the old %q", got, old)
	}
	f.eventually("a RoleNotFound Warning", func() bool {
		events := f.events("default", aws.ReasonRoleNotFound)
		return len(events) == 1 && events[0].Type == "Warning"
	})

	f.createRole("nodes-v2")
	f.setRole("default", "nodes-v2")
	current := aws.InstanceProfileName(clusterName, f.clients.Region, "default", "nodes-v2")
	f.eventually("default is Ready with the new role's profile", func() bool {
		got := f.get("default")
		c := f.ready("default")
		return c.Status == metav1.ConditionTrue && c.ObservedGeneration == got.Generation && got.Status.InstanceProfile == current
	})
	if got := f.roles(current); !slices.Equal(got, []string{"nodes-v2"}) {
		t.Errorf("the new profile holds %v; want [nodes-v2]", got)
	}
	if got := f.roles(old); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("while the standby claim holds it, the old profile holds %v; want [nodes]", got)
	}

	if err := f.env.Client.Delete(f.ctx, standby); err != nil {
		t.Fatal(err)
	}
	f.eventually("the old profile goes with the last claim that held it", func() bool { return !f.profileExists(old) })
	if !f.profileExists(current) {
		t.Errorf("the current profile %s went too", current)
	}
	f.eventually("an InstanceProfileRetired Event", func() bool { return len(f.events("default", ec2nodeclass.ReasonInstanceProfileRetired)) == 1 })
}

// claimHolding makes a standby claim of class whose stopped instance was launched with
// profile, as the lifecycle controller records it.
func (f *fixture) claimHolding(name, class, profile string) *v1beta1.NodeClaim {
	f.t.Helper()
	claim := &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.NodeClaimSpec{NodePool: "web", NodeClassRef: v1beta1.NodeClassReference{Kind: "EC2NodeClass", Name: class},
			DesiredState: v1beta1.DesiredStandby},
	}
	f.create(claim)
	claim.Status = v1beta1.NodeClaimStatus{Phase: v1beta1.PhaseStandby, InstanceID: "i-0123456789abcdef0", InstanceProfile: profile}
	if err := f.env.Client.Status().Update(f.ctx, claim); err != nil {
		f.t.Fatal(err)
	}
	return claim
}

// setRole changes the class's spec.role.
func (f *fixture) setRole(class, role string) {
	f.t.Helper()
	c := f.get(class)
	base := c.DeepCopy()
	c.Spec.Role = role
	if err := f.env.Client.Patch(f.ctx, c, client.MergeFrom(base)); err != nil {
		f.t.Fatal(err)
	}
}

// roles are the roles the instance profile holds.
func (f *fixture) roles(profile string) []string {
	f.t.Helper()
	out, err := f.clients.IAM.GetInstanceProfile(f.ctx, &iam.GetInstanceProfileInput{InstanceProfileName: awssdk.String(profile)})
	if err != nil {
		f.t.Fatal(err)
	}
	var names []string
	for _, r := range out.InstanceProfile.Roles {
		names = append(names, awssdk.ToString(r.RoleName))
	}
	return names
}
