package migrate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// poolConversion is the conversion of one Karpenter NodePool.
type poolConversion struct {
	rec    recorder
	in     karpenterNodePool
	labels map[string]v1beta1.LabelValue
	// classes are the node classes of the input, by name.
	classes map[string]*classConversion
	opts    Options
}

func (p *poolConversion) convert() *v1beta1.NodePool {
	in := p.in
	if len(in.Metadata.Name) > 63 || !dnsSubdomainPattern.MatchString(in.Metadata.Name) {
		p.rec.skipped("a Stratos NodePool's name is a label value of its nodes: a DNS name of at most 63 characters")
		return nil
	}
	ref, ok := p.nodeClassRef(in.Spec.Template.Spec.NodeClassRef)
	if !ok {
		return nil
	}
	out := &v1beta1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: kindNodePool},
		ObjectMeta: metav1.ObjectMeta{Name: in.Metadata.Name},
	}
	tmpl := &out.Spec.Template
	tmpl.Spec.NodeClassRef = ref

	p.labels = map[string]v1beta1.LabelValue{}
	p.templateLabels(in.Spec.Template.Metadata.Labels)
	tmpl.Annotations = p.templateAnnotations(in.Spec.Template.Metadata.Annotations)
	tmpl.Spec.Requirements = p.requirements(in.Spec.Template.Spec.Requirements)
	if len(p.labels) > 0 {
		tmpl.Labels = p.labels
	}
	tmpl.Spec.Taints = p.taints("spec.template.spec.taints", in.Spec.Template.Spec.Taints, nil)
	tmpl.Spec.StartupTaints = p.taints("spec.template.spec.startupTaints", in.Spec.Template.Spec.StartupTaints, tmpl.Spec.Taints)
	tmpl.Spec.ExpireAfter = p.expireAfter()
	tmpl.Spec.TerminationGracePeriod = p.terminationGracePeriod()
	tmpl.Spec.Kubelet = p.kubelet(ref.Name)
	out.Spec.Disruption = p.disruption()
	out.Spec.Limits = p.limits(in.Spec.Limits)
	if w := in.Spec.Weight; w != nil {
		if *w < 0 || *w > 100 {
			p.rec.unmapped("spec.weight", "%d: Stratos weights are from 0 to 100", *w)
		} else {
			out.Spec.Weight = int32(*w)
		}
	}
	if in.Spec.Replicas != nil {
		p.rec.unmapped("spec.replicas", "Stratos has no static pools of a fixed node count; a warm pool (spec.standby, see --standby) keeps nodes ready instead")
	}
	p.standby(out)
	return out
}

// nodeClassRef points the pool at the Stratos EC2NodeClass of the same name, or says why
// it cannot.
func (p *poolConversion) nodeClassRef(ref *karpenterNodeClassRef) (v1beta1.NodeClassReference, bool) {
	if ref == nil || ref.Name == "" {
		p.rec.skipped("the pool has no spec.template.spec.nodeClassRef")
		return v1beta1.NodeClassReference{}, false
	}
	group := ref.Group
	if group == "" && ref.APIVersion != "" {
		group, _, _ = strings.Cut(ref.APIVersion, "/")
	}
	if (group != "" && group != karpenterAWSGroup) || (ref.Kind != "" && ref.Kind != kindEC2NodeClass) {
		p.rec.skipped("the pool launches with %s %s of group %s; migrate converts pools of Karpenter's EC2NodeClass (karpenter.k8s.aws) only", ref.Kind, ref.Name, group)
		return v1beta1.NodeClassReference{}, false
	}
	if class, ok := p.classes[ref.Name]; ok && class.out == nil {
		p.rec.skipped("its EC2NodeClass %s could not be converted (see that class)", ref.Name)
		return v1beta1.NodeClassReference{}, false
	}
	return v1beta1.NodeClassReference{Group: v1beta1.Group, Kind: kindEC2NodeClass, Name: ref.Name}, true
}

func (p *poolConversion) templateLabels(labels map[string]string) {
	for _, k := range sortedKeys(labels) {
		field := "spec.template.metadata.labels[" + k + "]"
		if why := p.labelProblem(k, labels[k]); why != "" {
			p.rec.unmapped(field, "%s", why)
			continue
		}
		if len(p.labels) == 100 {
			p.rec.unmapped(field, "a Stratos template takes at most 100 labels")
			continue
		}
		p.labels[k] = v1beta1.LabelValue(labels[k])
	}
}

// labelProblem says why the Stratos CRD would refuse a template label, or "".
func (p *poolConversion) labelProblem(key, value string) string {
	switch {
	case strings.HasPrefix(key, v1beta1.Group+"/"):
		return "labels under stratos.sh/ are Stratos's own"
	case reservedLabelKeys[key]:
		return "the cloud sets this label; constrain it with a requirement instead"
	}
	if why := qualifiedNameProblem(key); why != "" {
		return "key " + why
	}
	if !labelValueOK(value) {
		return fmt.Sprintf("value %q is not a label value", value)
	}
	return ""
}

func (p *poolConversion) templateAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for _, k := range sortedKeys(in) {
		field := "spec.template.metadata.annotations[" + k + "]"
		switch {
		case strings.HasPrefix(k, v1beta1.Group+"/"):
			p.rec.unmapped(field, "annotations under stratos.sh/ are Stratos's own")
		case qualifiedNameProblem(k) != "":
			p.rec.unmapped(field, "key %s", qualifiedNameProblem(k))
		case len(in[k]) > 2048:
			p.rec.unmapped(field, "Stratos takes node annotations of at most 2048 characters")
		case len(out) == 100:
			p.rec.unmapped(field, "a Stratos template takes at most 100 annotations")
		default:
			if out == nil {
				out = map[string]string{}
			}
			out[k] = in[k]
		}
	}
	return out
}

// taints converts taints; those also in already (the pool's taints, for its startup
// taints) are left out, as the Stratos CRD refuses a taint in both.
func (p *poolConversion) taints(path string, in []karpenterTaint, already []v1beta1.Taint) []v1beta1.Taint {
	var out []v1beta1.Taint
	for i, t := range in {
		field := fmt.Sprintf("%s[%d]", path, i)
		effect := corev1.TaintEffect(t.Effect)
		switch {
		case strings.HasPrefix(t.Key, v1beta1.Group+"/"):
			p.rec.unmapped(field, "taint keys under stratos.sh/ are Stratos's own")
		case qualifiedNameProblem(t.Key) != "":
			p.rec.unmapped(field, "taint key %s", qualifiedNameProblem(t.Key))
		case !labelValueOK(t.Value):
			p.rec.unmapped(field, "taint value %q is not a label value", t.Value)
		case effect != corev1.TaintEffectNoSchedule && effect != corev1.TaintEffectPreferNoSchedule && effect != corev1.TaintEffectNoExecute:
			p.rec.unmapped(field, "taint effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t.Effect)
		case slices.ContainsFunc(already, func(a v1beta1.Taint) bool { return a.Key == t.Key && a.Effect == effect }):
			p.rec.unmapped(field, "%s:%s is also one of the pool's taints, which Stratos does not allow; the taint is kept", t.Key, t.Effect)
		case len(out) == 50:
			p.rec.unmapped(field, "a Stratos template takes at most 50 taints here")
		default:
			out = append(out, v1beta1.Taint{Key: t.Key, Value: t.Value, Effect: effect})
		}
	}
	return out
}

func (p *poolConversion) expireAfter() *v1beta1.ExpiryDuration {
	field, value := "spec.template.spec.expireAfter", p.in.Spec.Template.Spec.ExpireAfter
	if d := p.in.Spec.Disruption; value == nil && d != nil && d.ExpireAfter != nil {
		field, value = "spec.disruption.expireAfter", d.ExpireAfter
		p.rec.changed(field, "moved to spec.template.spec.expireAfter, as in Karpenter v1")
	}
	if value == nil {
		return nil
	}
	if *value == v1beta1.Never {
		return &v1beta1.ExpiryDuration{}
	}
	d, ok := p.duration(field, *value)
	if !ok {
		return nil
	}
	return &v1beta1.ExpiryDuration{Duration: &d.Duration}
}

func (p *poolConversion) terminationGracePeriod() *v1beta1.Duration {
	value := p.in.Spec.Template.Spec.TerminationGracePeriod
	if value == nil {
		return nil
	}
	field := "spec.template.spec.terminationGracePeriod"
	d, ok := p.duration(field, *value)
	if !ok {
		return nil
	}
	if d.Duration == 0 {
		p.rec.unmapped(field, "0s: Stratos refuses a zero grace period, which would force every drain past its PodDisruptionBudgets at once; unset, drains wait for the budgets")
		return nil
	}
	return d
}

// duration reads a Karpenter duration (Go's syntax, as metav1.Duration) into a Stratos
// one, reporting one it cannot read.
func (p *poolConversion) duration(field, value string) (*v1beta1.Duration, bool) {
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 {
		p.rec.unmapped(field, "%q is not a duration Stratos reads, such as 30s or 720h", value)
		return nil, false
	}
	return v1beta1.NewDuration(d), true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
