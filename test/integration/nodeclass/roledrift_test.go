package nodeclass_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
	"github.com/stratos-sh/stratos/internal/controllers/ec2nodeclass"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
)

// A standby node records the instance profile it launched with; when its class's role
// changes, the node is marked Drifted for InstanceProfileChanged and a standby node
// holding the new role's profile takes its place; the old profile, held by no claim
// any more, is removed.
//
// On main before the change claims recorded no profile, so this test does not compile
// there; what it guards against is what main did: the class's one profile got the new
// role in place, the standby node changed role under it at once, outside any budget,
// and drifted only as TemplateChanged.
func TestNodesOnTheProfileOfAnEarlierRoleDriftAndTheProfileGoes(t *testing.T) {
	f := newFixture(t, ec2nodeclass.Options{Refresh: time.Second, RetryFailed: 500 * time.Millisecond}, nil)
	f.startOperatorOnFakeCloud()
	f.create(class("web"))
	f.create(standbyPool("web"))
	oldProfile := aws.InstanceProfileName(clusterName, f.clients.Region, "web", "nodes")
	newProfile := aws.InstanceProfileName(clusterName, f.clients.Region, "web", "nodes-v2")
	var old string
	f.eventually("a standby node on the first role's profile stands by", func() bool {
		for name := range f.claimImages("web") {
			if c := f.claim(name); c.Status.Phase == v1beta1.PhaseStandby && c.Status.InstanceProfile == oldProfile {
				old = name
				return true
			}
		}
		return false
	})

	f.createRole("nodes-v2")
	patch(f, class("web"), func(c *v1beta1.EC2NodeClass) { c.Spec.Role = "nodes-v2" })
	f.eventually("the node on the old profile is marked Drifted for InstanceProfileChanged", func() bool {
		drifted := meta.FindStatusCondition(f.claim(old).Status.Conditions, v1beta1.ConditionDrifted)
		return drifted != nil && drifted.Status == metav1.ConditionTrue && drifted.Reason == nodepool.ReasonInstanceProfileChanged &&
			strings.Contains(drifted.Message, newProfile)
	})
	f.eventually("a standby node on the new role's profile replaces it", func() bool {
		images := f.claimImages("web")
		_, stays := images[old]
		for name := range images {
			if c := f.claim(name); c.Status.Phase == v1beta1.PhaseStandby && c.Status.InstanceProfile == newProfile {
				return !stays
			}
		}
		return false
	})
	f.eventually("the old profile goes once no claim holds it", func() bool { return !f.profileExists(oldProfile) })
	if !f.profileExists(newProfile) {
		t.Errorf("the new role's profile %s went too", newProfile)
	}
}
