package migrate

import (
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The keys the Stratos kubelet configuration takes, as its CRD rules list them.
var (
	reservedResourceKeys = []string{"cpu", "memory", "ephemeral-storage", "pid"}
	evictionSignals      = []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"}
)

// kubelet returns the pool's kubelet configuration: Karpenter v1 keeps it on the
// EC2NodeClass, Stratos on each pool, so every pool of a class gets the class's.
func (p *poolConversion) kubelet(className string) *v1beta1.KubeletConfiguration {
	if k := p.in.Spec.Template.Spec.Kubelet; k != nil {
		// v1beta1 kept it on the pool, where Stratos does.
		return convertKubelet(p.rec, "spec.template.spec.kubelet", k)
	}
	class, ok := p.classes[className]
	if !ok {
		p.rec.changed("spec.template.spec.nodeClassRef", "EC2NodeClass %s is not in the input: if it sets spec.kubelet, convert it with this pool so that the kubelet settings move onto the pool", className)
		return nil
	}
	if class.in.Spec.Kubelet == nil {
		return nil
	}
	class.kubeletPools = append(class.kubeletPools, p.in.Metadata.Name)
	p.rec.changed("spec.template.spec.kubelet", "set from EC2NodeClass %s's spec.kubelet: Stratos configures the kubelet per pool (see that class for what could not be carried)", className)
	return class.kubelet
}

// convertKubelet converts a kubelet configuration, reporting under field what Stratos
// does not configure.
func convertKubelet(rec recorder, field string, in *karpenterKubelet) *v1beta1.KubeletConfiguration {
	out := &v1beta1.KubeletConfiguration{}
	if in.MaxPods != nil {
		if *in.MaxPods < 1 || *in.MaxPods > 1000 {
			rec.unmapped(field+".maxPods", "%d: Stratos takes maxPods from 1 to 1000", *in.MaxPods)
		} else {
			out.MaxPods = ptr.To(int32(*in.MaxPods))
		}
	}
	if in.PodsPerCore != nil {
		rec.unmapped(field+".podsPerCore", "Stratos does not set the kubelet's pods per core; set maxPods instead")
	}
	out.SystemReserved = reserved(rec, field+".systemReserved", in.SystemReserved)
	out.KubeReserved = reserved(rec, field+".kubeReserved", in.KubeReserved)
	out.EvictionHard = thresholds(rec, field+".evictionHard", in.EvictionHard)
	soft := thresholds(rec, field+".evictionSoft", in.EvictionSoft)
	grace := map[string]v1beta1.Duration{}
	for _, signal := range sortedKeys(in.EvictionSoftGracePeriod) {
		d, err := time.ParseDuration(in.EvictionSoftGracePeriod[signal])
		if err != nil || d < 0 {
			rec.unmapped(field+".evictionSoftGracePeriod["+signal+"]", "%q is not a duration", in.EvictionSoftGracePeriod[signal])
			continue
		}
		grace[signal] = v1beta1.Duration{Duration: d}
	}
	// Stratos requires a grace period for each soft threshold and the reverse, as the
	// kubelet does.
	for _, signal := range sortedKeys(soft) {
		if _, ok := grace[signal]; !ok {
			rec.unmapped(field+".evictionSoft["+signal+"]", "has no evictionSoftGracePeriod, which the kubelet needs")
			delete(soft, signal)
		}
	}
	for _, signal := range sortedKeys(grace) {
		if _, ok := soft[signal]; !ok {
			rec.unmapped(field+".evictionSoftGracePeriod["+signal+"]", "has no evictionSoft threshold")
			delete(grace, signal)
		}
	}
	if len(soft) > 0 {
		out.EvictionSoft, out.EvictionSoftGracePeriod = soft, grace
	}
	if in.EvictionMaxPodGracePeriod != nil {
		rec.unmapped(field+".evictionMaxPodGracePeriod", "Stratos does not set the kubelet's longest grace period for soft evictions; pods get their own")
	}
	high, low := percent(rec, field+".imageGCHighThresholdPercent", in.ImageGCHighThresholdPercent, 1, 100), percent(rec, field+".imageGCLowThresholdPercent", in.ImageGCLowThresholdPercent, 0, 99)
	if high != nil && low != nil && *low >= *high {
		rec.unmapped(field+".imageGCLowThresholdPercent", "%d is not below imageGCHighThresholdPercent %d", *low, *high)
		low = nil
	}
	out.ImageGCHighThresholdPercent, out.ImageGCLowThresholdPercent = high, low
	if in.CPUCFSQuota != nil {
		rec.unmapped(field+".cpuCFSQuota", "Stratos does not set the kubelet's CPU CFS quota; the image's default (enforced) applies")
	}
	if len(in.ClusterDNS) > 0 {
		rec.unmapped(field+".clusterDNS", "Stratos does not set the kubelet's cluster DNS; the image finds the cluster's DNS service itself (set it in userData if you must)")
	}
	if isZeroKubelet(out) {
		return nil
	}
	return out
}

func reserved(rec recorder, field string, in map[string]scalar) corev1.ResourceList {
	var out corev1.ResourceList
	for _, k := range sortedKeys(in) {
		q, err := resource.ParseQuantity(string(in[k]))
		switch {
		case !slices.Contains(reservedResourceKeys, k):
			rec.unmapped(field+"["+k+"]", "Stratos reserves only %s", strings.Join(reservedResourceKeys, ", "))
		case err != nil || q.Sign() < 0:
			rec.unmapped(field+"["+k+"]", "%q is not a quantity of zero or more", in[k])
		default:
			if out == nil {
				out = corev1.ResourceList{}
			}
			out[corev1.ResourceName(k)] = q
		}
	}
	return out
}

func thresholds(rec recorder, field string, in map[string]scalar) map[string]v1beta1.EvictionThreshold {
	var out map[string]v1beta1.EvictionThreshold
	for _, signal := range sortedKeys(in) {
		v := string(in[signal])
		switch {
		case !slices.Contains(evictionSignals, signal):
			rec.unmapped(field+"["+signal+"]", "Stratos takes the eviction signals %s", strings.Join(evictionSignals, ", "))
		case !evictionThresholdOK(v):
			rec.unmapped(field+"["+signal+"]", "%q is not a positive quantity or a percentage from 0%% to 100%%", v)
		default:
			if out == nil {
				out = map[string]v1beta1.EvictionThreshold{}
			}
			out[signal] = v1beta1.EvictionThreshold(v)
		}
	}
	return out
}

var evictionPercentPattern = regexp.MustCompile(`^(100([.]0+)?|[0-9]{1,2}([.][0-9]+)?)%$`)

func evictionThresholdOK(v string) bool {
	if len(v) > 32 {
		return false
	}
	if evictionPercentPattern.MatchString(v) {
		return true
	}
	q, err := resource.ParseQuantity(v)
	return err == nil && q.Sign() > 0
}

func percent(rec recorder, field string, in *int64, lowest, highest int64) *int32 {
	if in == nil {
		return nil
	}
	if *in < lowest || *in > highest {
		rec.unmapped(field, "%d: Stratos takes %d to %d", *in, lowest, highest)
		return nil
	}
	return ptr.To(int32(*in))
}

func isZeroKubelet(k *v1beta1.KubeletConfiguration) bool {
	return k.MaxPods == nil && len(k.SystemReserved) == 0 && len(k.KubeReserved) == 0 && len(k.EvictionHard) == 0 &&
		len(k.EvictionSoft) == 0 && k.ImageGCHighThresholdPercent == nil && k.ImageGCLowThresholdPercent == nil
}
