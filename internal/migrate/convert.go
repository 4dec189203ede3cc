// Package migrate converts Karpenter's NodePools and EC2NodeClasses (karpenter.sh/v1,
// karpenter.k8s.aws/v1, and their v1beta1) into Stratos's, and reports every field it
// cannot carry over or carries with a change of meaning, and every workload whose pods
// use Karpenter's labels. It is pure: the objects come in decoded, from files or from a
// cluster (see package cli), and go out as Stratos objects and a report.
package migrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Options shape the conversion.
type Options struct {
	// Standby proposes a warm pool of this many standby nodes on every pool; nil
	// proposes none.
	Standby *int32
}

// Result is what a conversion made.
type Result struct {
	EC2NodeClasses []v1beta1.EC2NodeClass
	NodePools      []v1beta1.NodePool
	Report         Report
	// KarpenterObjects counts the Karpenter NodePools and EC2NodeClasses read, converted
	// or not.
	KarpenterObjects int
}

// The Karpenter API versions migrate reads.
var (
	nodePoolVersions  = []string{karpenterGroup + "/v1", karpenterGroup + "/v1beta1"}
	nodeClassVersions = []string{karpenterAWSGroup + "/v1", karpenterAWSGroup + "/v1beta1"}
)

// Convert converts the Karpenter objects among objects and scans the workloads among
// them. Objects that are neither are reported as skipped.
func Convert(objects []Object, opts Options) *Result {
	res := &Result{}
	classes := map[string]*classConversion{}
	var classOrder []string
	var pools []*poolConversion
	for _, o := range objects {
		rec := recorder{object: describe(o), source: o.Source, report: &res.Report}
		group, _, _ := strings.Cut(o.APIVersion(), "/")
		switch {
		case o.Kind() == kindNodePool && group == karpenterGroup:
			res.KarpenterObjects++
			if !slices.Contains(nodePoolVersions, o.APIVersion()) {
				rec.skipped("apiVersion %s is not one migrate reads (%s)", o.APIVersion(), strings.Join(nodePoolVersions, ", "))
				continue
			}
			p := &poolConversion{rec: rec, classes: classes, opts: opts}
			if !decodeKarpenter(rec, o, &p.in) {
				continue
			}
			pools = append(pools, p)
		case o.Kind() == kindEC2NodeClass && group == karpenterAWSGroup:
			res.KarpenterObjects++
			if !slices.Contains(nodeClassVersions, o.APIVersion()) {
				rec.skipped("apiVersion %s is not one migrate reads (%s)", o.APIVersion(), strings.Join(nodeClassVersions, ", "))
				continue
			}
			c := &classConversion{rec: rec}
			if !decodeKarpenter(rec, o, &c.in) {
				continue
			}
			if _, dup := classes[c.in.Metadata.Name]; dup {
				rec.skipped("a second EC2NodeClass of this name in the input; the first is converted")
				continue
			}
			classes[c.in.Metadata.Name] = c
			classOrder = append(classOrder, c.in.Metadata.Name)
		case group == karpenterGroup || group == karpenterAWSGroup:
			res.KarpenterObjects++
			rec.skipped("migrate converts NodePools and EC2NodeClasses; %s is Karpenter's own state or an older API (Provisioner and AWSNodeTemplate are v1alpha5's: convert them to v1 with Karpenter's tools first)", o.Kind())
		case isWorkload(o):
			found, err := scanWorkload(o)
			if err != nil {
				rec.skipped("cannot read the workload: %v", err)
			}
			res.Report.Workloads = append(res.Report.Workloads, found...)
		default:
			rec.skipped("not a Karpenter NodePool or EC2NodeClass, nor a workload")
		}
	}

	for _, name := range classOrder {
		c := classes[name]
		c.convert()
	}
	seen := map[string]bool{}
	for _, p := range pools {
		if seen[p.in.Metadata.Name] {
			p.rec.skipped("a second NodePool of this name in the input; the first is converted")
			continue
		}
		seen[p.in.Metadata.Name] = true
		if out := p.convert(); out != nil {
			res.NodePools = append(res.NodePools, *out)
		}
	}
	for _, name := range classOrder {
		c := classes[name]
		if c.out == nil {
			continue
		}
		res.EC2NodeClasses = append(res.EC2NodeClasses, *c.out)
		if c.in.Spec.Kubelet == nil {
			continue
		}
		if len(c.kubeletPools) == 0 {
			c.rec.unmapped("spec.kubelet", "Stratos configures the kubelet on each NodePool, and no NodePool of the input uses this class: convert its pools with it")
		} else {
			c.rec.changed("spec.kubelet", "moved onto the NodePools that use this class (spec.template.spec.kubelet): %s", strings.Join(c.kubeletPools, ", "))
		}
	}
	slices.SortFunc(res.NodePools, func(a, b v1beta1.NodePool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(res.EC2NodeClasses, func(a, b v1beta1.EC2NodeClass) int { return strings.Compare(a.Name, b.Name) })
	res.Report.sort()
	return res
}

// decodeKarpenter decodes a Karpenter object, reporting the fields migrate does not know
// and an object it cannot read at all.
func decodeKarpenter(rec recorder, o Object, into any) bool {
	unknown, err := decodeInto(o.Raw, into)
	if err != nil {
		rec.skipped("cannot read it: %v", err)
		return false
	}
	for _, field := range unknown {
		rec.unmapped(field, "not a field of Karpenter's API that migrate knows; it is not converted")
	}
	return true
}

// describe names an object for the report: its kind and name.
func describe(o Object) string {
	kind := o.Kind()
	if kind == "" {
		kind = "object"
	}
	name := o.Name()
	if name == "" {
		name = "(no name)"
	}
	return fmt.Sprintf("%s %s", kind, name)
}
