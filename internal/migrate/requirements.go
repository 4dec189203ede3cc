package migrate

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// maxRequirements is the most requirements a Stratos template takes.
const maxRequirements = 30

// requirements converts a pool's requirements. Custom labels required with In and one
// value become the template's labels, as Karpenter sets them on its nodes; everything
// else Stratos cannot express is reported and left out.
func (p *poolConversion) requirements(in []karpenterRequirement) []v1beta1.NodeSelectorRequirement {
	var out []v1beta1.NodeSelectorRequirement
	for i, r := range in {
		field := fmt.Sprintf("spec.template.spec.requirements[%d]", i)
		req, ok := p.requirement(field, r)
		if !ok {
			continue
		}
		if len(out) == maxRequirements {
			p.rec.unmapped(field, "a Stratos pool takes at most %d requirements; this one and those after it are left out", maxRequirements)
			break
		}
		out = append(out, req)
	}
	return out
}

func (p *poolConversion) requirement(field string, r karpenterRequirement) (v1beta1.NodeSelectorRequirement, bool) {
	operator := corev1.NodeSelectorOperator(r.Operator)
	values := dedupe(r.Values)
	key, why := stratosKeyFor(r.Key)
	if key == "" && why != "" {
		p.rec.unmapped(field, "%s: %s", r.Key, why)
		return v1beta1.NodeSelectorRequirement{}, false
	}
	if key == "" {
		p.customLabel(field, r.Key, operator, values)
		return v1beta1.NodeSelectorRequirement{}, false
	}
	if key == v1beta1.LabelNodePool {
		p.rec.unmapped(field, "%s: a pool cannot require its own name", r.Key)
		return v1beta1.NodeSelectorRequirement{}, false
	}
	if key != r.Key {
		p.rec.changed(field, "key %s is %s in Stratos", r.Key, key)
	}

	// Karpenter's Gte and Lte are Gt and Lt of the next whole number, which is all
	// Stratos's numeric labels hold.
	switch r.Operator {
	case "Gte", "Lte":
		if len(values) != 1 {
			p.rec.unmapped(field, "%s %s needs exactly one value", r.Key, r.Operator)
			return v1beta1.NodeSelectorRequirement{}, false
		}
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil {
			p.rec.unmapped(field, "%s %s %q: not a whole number", r.Key, r.Operator, values[0])
			return v1beta1.NodeSelectorRequirement{}, false
		}
		if r.Operator == "Gte" {
			operator, values = corev1.NodeSelectorOpGt, []string{strconv.FormatInt(n-1, 10)}
		} else {
			operator, values = corev1.NodeSelectorOpLt, []string{strconv.FormatInt(n+1, 10)}
		}
		p.rec.changed(field, "%s %s %d is written %s %s, the same whole numbers", r.Key, r.Operator, n, operator, values[0])
	}

	switch operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		values = nil
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !slices.Contains(v1beta1.NumericInstanceLabelKeys, key) {
			p.rec.unmapped(field, "%s %s: Stratos compares only its numeric instance labels (generation, cpu, memory, gpu-count, network-bandwidth)", r.Key, operator)
			return v1beta1.NodeSelectorRequirement{}, false
		}
		if len(values) != 1 {
			p.rec.unmapped(field, "%s %s needs exactly one value", r.Key, operator)
			return v1beta1.NodeSelectorRequirement{}, false
		}
	default:
		p.rec.unmapped(field, "operator %q is not one Stratos knows (In, NotIn, Exists, DoesNotExist, Gt, Lt)", r.Operator)
		return v1beta1.NodeSelectorRequirement{}, false
	}

	values = p.allowedValues(field, r.Key, key, operator, values)
	if (operator == corev1.NodeSelectorOpIn || operator == corev1.NodeSelectorOpNotIn) && len(values) == 0 {
		if operator == corev1.NodeSelectorOpIn && key == v1beta1.LabelCapacityType {
			// In [reserved] only: reservations are on-demand capacity bought ahead.
			p.rec.changed(field, "a pool of reserved capacity only becomes a pool of on-demand capacity: Stratos does not launch into capacity reservations")
			values = []string{v1beta1.CapacityTypeOnDemand}
		} else {
			p.rec.unmapped(field, "%s: no value Stratos accepts is left, so the requirement is left out", r.Key)
			return v1beta1.NodeSelectorRequirement{}, false
		}
	}
	out := v1beta1.NodeSelectorRequirement{Key: key, Operator: operator, Values: values}
	out.MinValues = p.minValues(field, r, key, operator, values)
	return out, true
}

// allowedValues drops the values the Stratos CRD refuses for the key, reporting each.
func (p *poolConversion) allowedValues(field, karpenterKey, key string, operator corev1.NodeSelectorOperator, values []string) []string {
	var allowed []string
	for _, v := range values {
		switch {
		case key == v1beta1.LabelCapacityType && v == capacityTypeReserved:
			p.rec.unmapped(field, "%s value reserved: Stratos has no capacity reservations; it launches on-demand and spot only", karpenterKey)
			continue
		case key == v1beta1.LabelCapacityType && v != v1beta1.CapacityTypeOnDemand && v != v1beta1.CapacityTypeSpot,
			key == corev1.LabelArchStable && v != "amd64" && v != "arm64":
			p.rec.unmapped(field, "%s value %q: not one Stratos launches", karpenterKey, v)
			continue
		case key == corev1.LabelOSStable && v != "linux" && v != "windows":
			p.rec.unmapped(field, "%s value %q: Stratos knows linux and windows only", karpenterKey, v)
			continue
		case key == corev1.LabelOSStable && v == "windows" && operator == corev1.NodeSelectorOpIn:
			p.rec.unmapped(field, "%s value windows: Stratos launches Linux nodes only", karpenterKey)
			continue
		case slices.Contains(v1beta1.NumericInstanceLabelKeys, key) && !wholeNumberPattern.MatchString(v):
			p.rec.unmapped(field, "%s value %q: Stratos's %s holds whole numbers only", karpenterKey, v, key)
			continue
		case len(v) > 63:
			p.rec.unmapped(field, "%s value %q: longer than the 63 characters of a label value", karpenterKey, v)
			continue
		}
		allowed = append(allowed, v)
	}
	if len(allowed) > 100 {
		p.rec.unmapped(field, "%s: a Stratos requirement takes at most 100 values; the rest are left out", karpenterKey)
		allowed = allowed[:100]
	}
	return allowed
}

// minValues carries Karpenter's minValues where Stratos takes it: not on the zone or the
// capacity type, and never more than an In requirement's values.
func (p *poolConversion) minValues(field string, r karpenterRequirement, key string, operator corev1.NodeSelectorOperator, values []string) *int32 {
	if r.MinValues == nil {
		return nil
	}
	n := *r.MinValues
	switch {
	case key == corev1.LabelTopologyZone || key == v1beta1.LabelCapacityType:
		p.rec.unmapped(field+".minValues", "Stratos takes minValues for what the instance type is, not for the zone or the capacity type: a node is bought in one of each")
	case operator == corev1.NodeSelectorOpDoesNotExist:
		p.rec.unmapped(field+".minValues", "minValues cannot go with DoesNotExist")
	case n < 1 || n > 50:
		p.rec.unmapped(field+".minValues", "%d: Stratos takes minValues from 1 to 50", n)
	case operator == corev1.NodeSelectorOpIn && int(n) > len(values):
		p.rec.unmapped(field+".minValues", "%d: more than the %d values left of the requirement", n, len(values))
	default:
		return ptr.To(int32(n))
	}
	return nil
}

// customLabel handles a requirement on a label of the user's own: with In and one value
// Karpenter sets it on the node, and so does a Stratos pool's template label.
func (p *poolConversion) customLabel(field, key string, operator corev1.NodeSelectorOperator, values []string) {
	if operator != corev1.NodeSelectorOpIn || len(values) != 1 {
		p.rec.unmapped(field, "%s %s: Stratos requirements constrain only the labels of what it launches; a label of your own is set with spec.template.metadata.labels, which takes one value", key, operator)
		return
	}
	if why := p.labelProblem(key, values[0]); why != "" {
		p.rec.unmapped(field, "%s: %s", key, why)
		return
	}
	if existing, ok := p.labels[key]; ok && string(existing) != values[0] {
		p.rec.unmapped(field, "%s In [%s] contradicts the template's label %s=%s, which is kept", key, values[0], key, existing)
		return
	}
	p.labels[key] = v1beta1.LabelValue(values[0])
	p.rec.changed(field, "%s In [%s] becomes the template label %s: %s; Stratos requirements constrain only the labels of what it launches", key, values[0], key, values[0])
}

func dedupe(values []string) []string {
	var out []string
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
