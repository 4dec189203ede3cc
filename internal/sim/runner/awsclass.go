package runner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// AnnotationAMIAlias on a FakeNodeClass is the image alias of the EC2NodeClass it
// becomes on aws, such as bottlerocket@latest; al2023@latest when it is absent. The fake
// cloud ignores it.
const AnnotationAMIAlias = "sim.stratos.sh/ami-alias"

// ec2NodeClasses is what a scenario's fake node classes become on aws: EC2NodeClasses
// that find the simulated VPC's subnets and security group by tag, the AMI by alias,
// and the nodes' IAM role by name.
type ec2NodeClasses struct {
	// discoveryTags mark the subnets and the security group the runner created.
	discoveryTags map[string]string
	// role is the IAM role of the nodes.
	role string
}

// translate rewrites a scenario written for the fake cloud to run on aws, in place: each
// FakeNodeClass becomes an EC2NodeClass of the same name, and each NodePool that refers
// to one refers to the EC2NodeClass instead, with the class's instance types as a
// requirement on node.kubernetes.io/instance-type. The objects applied before the first
// step and those of apply steps are translated alike, so that the same scenario file runs
// on both clouds. scenario.Validate has refused what an EC2NodeClass cannot carry.
func (c ec2NodeClasses) translate(s *scenario.Scenario) error {
	types := map[string][]string{}
	batches := [][]unstructured.Unstructured{s.Objects}
	for _, st := range s.Steps {
		batches = append(batches, st.Apply)
	}
	for _, batch := range batches {
		for _, o := range batch {
			if o.GetKind() != "FakeNodeClass" {
				continue
			}
			names, _, err := unstructured.NestedStringSlice(o.Object, "spec", "instanceTypes")
			if err != nil {
				return fmt.Errorf("FakeNodeClass %s: spec.instanceTypes: %w", o.GetName(), err)
			}
			types[o.GetName()] = names
		}
	}
	for _, batch := range batches {
		for i := range batch {
			o := &batch[i]
			var err error
			switch o.GetKind() {
			case "FakeNodeClass":
				err = c.nodeClass(o)
			case "NodePool":
				err = poolOnAWS(o, types)
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
		}
	}
	return nil
}

// nodeClass replaces a FakeNodeClass with its EC2NodeClass, of the images of its
// AnnotationAMIAlias.
func (c ec2NodeClasses) nodeClass(o *unstructured.Unstructured) error {
	hibernate, _, err := unstructured.NestedBool(o.Object, "spec", "hibernate")
	if err != nil {
		return err
	}
	alias := "al2023@latest"
	if a := o.GetAnnotations()[AnnotationAMIAlias]; a != "" {
		alias = a
	}
	selector := []any{map[string]any{"tags": stringMap(c.discoveryTags)}}
	spec := map[string]any{
		"amiSelectorTerms":           []any{map[string]any{"alias": alias}},
		"subnetSelectorTerms":        selector,
		"securityGroupSelectorTerms": selector,
		"role":                       c.role,
	}
	if hibernate {
		spec["hibernate"] = true
	}
	metadata := map[string]any{"name": o.GetName()}
	if labels := o.GetLabels(); len(labels) > 0 {
		metadata["labels"] = stringMap(labels)
	}
	o.Object = map[string]any{
		"apiVersion": v1beta1.GroupVersion.String(),
		"kind":       "EC2NodeClass",
		"metadata":   metadata,
		"spec":       spec,
	}
	return nil
}

// poolOnAWS points a pool at the EC2NodeClass of its FakeNodeClass, with the class's
// instance types as a requirement.
func poolOnAWS(o *unstructured.Unstructured, types map[string][]string) error {
	kind, _, err := unstructured.NestedString(o.Object, "spec", "template", "spec", "nodeClassRef", "kind")
	if err != nil || kind != "FakeNodeClass" {
		return err
	}
	name, _, err := unstructured.NestedString(o.Object, "spec", "template", "spec", "nodeClassRef", "name")
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedField(o.Object, "EC2NodeClass", "spec", "template", "spec", "nodeClassRef", "kind"); err != nil {
		return err
	}
	names := types[name]
	if len(names) == 0 {
		return nil
	}
	requirements, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "requirements")
	if err != nil {
		return err
	}
	values := make([]any, len(names))
	for i, n := range names {
		values[i] = n
	}
	requirements = append(requirements, map[string]any{
		"key": corev1.LabelInstanceTypeStable, "operator": string(corev1.NodeSelectorOpIn), "values": values,
	})
	return unstructured.SetNestedSlice(o.Object, requirements, "spec", "template", "spec", "requirements")
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
