package migrate

import (
	"fmt"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Karpenter's defaults where Stratos's differ: the converted pool spells them out so that
// it behaves as the Karpenter pool did.
const (
	karpenterDefaultPolicy = v1beta1.ConsolidationWhenEmptyOrUnderutilized
	karpenterDefaultAfter  = 0
)

var (
	budgetNodesPattern    = regexp.MustCompile(`^(([0-9]|[1-9][0-9]|100)%|[0-9]+)$`)
	budgetSchedulePattern = regexp.MustCompile(`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+)$`)
)

func (p *poolConversion) disruption() v1beta1.Disruption {
	var out v1beta1.Disruption
	in := p.in.Spec.Disruption
	if in == nil {
		in = &karpenterDisruption{}
	}
	switch in.ConsolidationPolicy {
	case "", string(v1beta1.ConsolidationWhenEmptyOrUnderutilized):
		// Unset is Karpenter's default, which is not Stratos's (WhenEmpty).
		out.ConsolidationPolicy = karpenterDefaultPolicy
	case "WhenUnderutilized":
		out.ConsolidationPolicy = v1beta1.ConsolidationWhenEmptyOrUnderutilized
		p.rec.changed("spec.disruption.consolidationPolicy", "WhenUnderutilized is WhenEmptyOrUnderutilized, as in Karpenter v1")
	case string(v1beta1.ConsolidationWhenEmpty):
		out.ConsolidationPolicy = v1beta1.ConsolidationWhenEmpty
	default:
		p.rec.unmapped("spec.disruption.consolidationPolicy", "%q is not WhenEmpty or WhenEmptyOrUnderutilized; Stratos's default, WhenEmpty, applies", in.ConsolidationPolicy)
	}

	never := false
	switch {
	case in.ConsolidateAfter == nil:
		// Karpenter v1 defaults it to 0s; Stratos to 30s.
		out.ConsolidateAfter = v1beta1.NewDuration(karpenterDefaultAfter)
	case *in.ConsolidateAfter == v1beta1.Never:
		never = true
	default:
		if d, ok := p.duration("spec.disruption.consolidateAfter", *in.ConsolidateAfter); ok {
			out.ConsolidateAfter = d
		}
	}

	for i, b := range in.Budgets {
		if budget, ok := p.budget(fmt.Sprintf("spec.disruption.budgets[%d]", i), b); ok {
			out.Budgets = append(out.Budgets, budget)
		}
	}
	if never {
		// Stratos has no Never: a budget of no nodes for the consolidation reasons, at
		// all times, keeps consolidation from giving back any node, which is what Never
		// meant. The pool's other budgets still pace drift and expiry.
		if len(out.Budgets) == 0 {
			out.Budgets = append(out.Budgets, v1beta1.Budget{Nodes: "10%"})
		}
		out.Budgets = append(out.Budgets, v1beta1.Budget{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionEmpty, v1beta1.DisruptionUnderutilized}})
		p.rec.changed("spec.disruption.consolidateAfter", "Never has no Stratos spelling: a budget of 0 nodes for the Empty and Underutilized reasons is added instead, which stops consolidation all the same")
	}
	if len(out.Budgets) > 50 {
		p.rec.unmapped("spec.disruption.budgets", "a Stratos pool takes at most 50 budgets; those after the 50th are left out")
		out.Budgets = out.Budgets[:50]
	}

	expires := true
	if e := p.in.Spec.Template.Spec.ExpireAfter; e != nil && *e == v1beta1.Never {
		expires = false
	}
	applyToAll := len(out.Budgets) == 0 || slices.ContainsFunc(out.Budgets, func(b v1beta1.Budget) bool { return len(b.Reasons) == 0 })
	if expires && applyToAll {
		p.rec.changed("spec.disruption.budgets", "a budget without reasons (Stratos's default budget of 10%% included) also paces expiry in Stratos, which counts Expired among its reasons; Karpenter v1 expires nodes without regard to budgets")
	}
	return out
}

func (p *poolConversion) budget(field string, b karpenterBudget) (v1beta1.Budget, bool) {
	if !budgetNodesPattern.MatchString(b.Nodes) {
		p.rec.unmapped(field, "nodes %q: Stratos takes a count such as 3 or a percentage from 0%% to 100%%", b.Nodes)
		return v1beta1.Budget{}, false
	}
	out := v1beta1.Budget{Nodes: b.Nodes}
	if (b.Schedule == nil) != (b.Duration == nil) {
		p.rec.unmapped(field, "schedule and duration must be set together")
		return v1beta1.Budget{}, false
	}
	if b.Schedule != nil {
		if len(*b.Schedule) > 128 || !budgetSchedulePattern.MatchString(*b.Schedule) {
			p.rec.unmapped(field, "schedule %q: Stratos takes a cron expression of five fields or a macro such as @daily", *b.Schedule)
			return v1beta1.Budget{}, false
		}
		d, ok := p.duration(field+".duration", *b.Duration)
		if !ok {
			return v1beta1.Budget{}, false
		}
		// Karpenter reads schedules in UTC, Stratos's default time zone.
		out.Schedule, out.Duration = ptr.To(*b.Schedule), d
	}
	for _, r := range dedupe(b.Reasons) {
		switch reason := v1beta1.DisruptionReason(r); reason {
		case v1beta1.DisruptionEmpty, v1beta1.DisruptionUnderutilized, v1beta1.DisruptionDrifted:
			out.Reasons = append(out.Reasons, reason)
		default:
			p.rec.unmapped(field+".reasons", "%q is not a reason Stratos knows (Empty, Underutilized, Drifted, Expired)", r)
		}
	}
	if len(b.Reasons) > 0 && len(out.Reasons) == 0 {
		p.rec.unmapped(field, "none of its reasons is one Stratos knows, so the budget is left out rather than made to apply to every reason")
		return v1beta1.Budget{}, false
	}
	return out, true
}

func (p *poolConversion) limits(in map[string]scalar) v1beta1.Limits {
	var out v1beta1.Limits
	for _, k := range sortedKeys(in) {
		field := "spec.limits[" + k + "]"
		q, err := resource.ParseQuantity(string(in[k]))
		switch {
		case err != nil:
			p.rec.unmapped(field, "%q is not a quantity", in[k])
			continue
		case q.Sign() < 0:
			p.rec.unmapped(field, "%s: limits must not be negative", in[k])
			continue
		case corev1.ResourceName(k) == v1beta1.LimitNodes && !wholeNumberPattern.MatchString(q.String()):
			p.rec.unmapped(field, "%s: the nodes limit is a whole number of nodes", in[k])
			continue
		case len(out) == 32:
			p.rec.unmapped(field, "a Stratos pool takes at most 32 limits")
			continue
		}
		if out == nil {
			out = v1beta1.Limits{}
		}
		out[corev1.ResourceName(k)] = q
	}
	return out
}

// standby proposes the warm pool of --standby. Standby nodes stop and start, which only
// on-demand instances do: a spot-only pool is opened to on-demand as well, or it could
// keep no standby node at all.
func (p *poolConversion) standby(out *v1beta1.NodePool) {
	if p.opts.Standby == nil {
		return
	}
	out.Spec.Standby.Min = *p.opts.Standby
	nodes := "nodes"
	if *p.opts.Standby == 1 {
		nodes = "node"
	}
	msg := fmt.Sprintf("a warm pool of %d standby %s (spec.standby.min), which Karpenter has no counterpart for", *p.opts.Standby, nodes)
	if len(out.Spec.Limits) > 0 {
		msg += "; they count against the pool's limits while stopped"
	}
	p.rec.proposed("spec.standby", "%s", msg)
	if !rulesOutOnDemand(out.Spec.Template.Spec.Requirements) {
		return
	}
	reqs := out.Spec.Template.Spec.Requirements
	for i, r := range reqs {
		if r.Key != v1beta1.LabelCapacityType {
			continue
		}
		reqs[i] = v1beta1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeSpot, v1beta1.CapacityTypeOnDemand}}
	}
	out.Spec.Standby.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}}}
	p.rec.proposed("spec.standby.requirements", "the pool is spot-only, and standby nodes must be on-demand (spot instances cannot be kept stopped): the template now allows spot and on-demand, and the standby requirements pin on-demand; cold launches take the cheapest offering, usually spot, but may now be on-demand")
}

// rulesOutOnDemand reports whether requirements leave only spot.
func rulesOutOnDemand(reqs []v1beta1.NodeSelectorRequirement) bool {
	for _, r := range reqs {
		if r.Key != v1beta1.LabelCapacityType {
			continue
		}
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			if !slices.Contains(r.Values, v1beta1.CapacityTypeOnDemand) {
				return true
			}
		case corev1.NodeSelectorOpNotIn:
			if slices.Contains(r.Values, v1beta1.CapacityTypeOnDemand) {
				return true
			}
		case corev1.NodeSelectorOpDoesNotExist:
			return true
		}
	}
	return false
}
