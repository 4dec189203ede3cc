package migrate

import (
	"bytes"
	"strings"
	"testing"
)

// TestMalformedObjectsAreSkippedWithAReason feeds objects Karpenter's API server would
// refuse, or that are not Karpenter's at all: each is skipped with a reason, nothing
// panics, and nothing is written for it.
func TestMalformedObjectsAreSkippedWithAReason(t *testing.T) {
	cases := map[string]struct {
		manifest string
		reason   string
	}{
		"a spec that is not an object": {
			manifest: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec: 3\n",
			reason:   "cannot read it",
		},
		"a pool without a node class": {
			manifest: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec: {template: {spec: {}}}\n",
			reason:   "no spec.template.spec.nodeClassRef",
		},
		"a pool of another provider's class": {
			manifest: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec: {template: {spec: {nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: default}}}}\n",
			reason:   "Karpenter's EC2NodeClass (karpenter.k8s.aws) only",
		},
		"a pool without a name": {
			manifest: "apiVersion: karpenter.sh/v1\nkind: NodePool\nspec: {template: {spec: {nodeClassRef: {kind: EC2NodeClass, name: c}}}}\n",
			reason:   "DNS name of at most 63 characters",
		},
		"an unknown version": {
			manifest: "apiVersion: karpenter.sh/v2\nkind: NodePool\nmetadata: {name: p}\n",
			reason:   "apiVersion karpenter.sh/v2 is not one migrate reads",
		},
		"a class without subnets": {
			manifest: "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {role: r, amiSelectorTerms: [{alias: al2023@latest}], securityGroupSelectorTerms: [{id: sg-0123456789abcdef0}]}\n",
			reason:   "at least one subnet and one security group",
		},
		"a class with both a role and an instance profile": {
			manifest: "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {role: r, instanceProfile: p, amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{id: subnet-0123456789abcdef0}], securityGroupSelectorTerms: [{id: sg-0123456789abcdef0}]}\n",
			reason:   "exactly one of role and instanceProfile",
		},
		"a class whose only image is an SSM parameter": {
			manifest: "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {role: r, amiSelectorTerms: [{ssmParameter: /my/ami}], subnetSelectorTerms: [{id: subnet-0123456789abcdef0}], securityGroupSelectorTerms: [{id: sg-0123456789abcdef0}]}\n",
			reason:   "no AMI selector term Stratos can use",
		},
		"an object that is neither Karpenter's nor a workload": {
			manifest: "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\n",
			reason:   "not a Karpenter NodePool or EC2NodeClass, nor a workload",
		},
		"a workload that does not decode": {
			manifest: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: n}\nspec: {replicas: many}\n",
			reason:   "cannot read the workload",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects, err := Decode(bytes.NewBufferString(tc.manifest), "test")
			if err != nil {
				t.Fatal(err)
			}
			res := Convert(objects, Options{})
			if len(res.NodePools) != 0 || len(res.EC2NodeClasses) != 0 {
				t.Errorf("wrote %d pools and %d classes for it", len(res.NodePools), len(res.EC2NodeClasses))
			}
			found := false
			for _, e := range res.Report.Entries {
				if e.Outcome == Skipped && strings.Contains(e.Message, tc.reason) {
					found = true
				}
			}
			if !found {
				t.Errorf("no skipped entry says %q: %+v", tc.reason, res.Report.Entries)
			}
		})
	}
}

func TestDecodeNamesTheBadDocument(t *testing.T) {
	_, err := Decode(bytes.NewBufferString("apiVersion: v1\nkind: A\n---\n- a list\n"), "f.yaml")
	if err == nil || !strings.Contains(err.Error(), "f.yaml: document 2") {
		t.Fatalf("want an error naming f.yaml's document 2, got %v", err)
	}
	objects, err := Decode(bytes.NewBufferString("# only a comment\n---\napiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod, metadata: {name: a}}, {apiVersion: v1, kind: Pod, metadata: {name: b}}]\n"), "f.yaml")
	if err != nil || len(objects) != 2 || objects[1].Name() != "b" {
		t.Fatalf("a comment-only document and a List: got %d objects, %v", len(objects), err)
	}
}
