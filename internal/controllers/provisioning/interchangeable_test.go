package provisioning

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func webPod(i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelArchStable: "amd64"},
			Containers: []corev1.Container{{Name: "web", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi"),
			}}}},
		},
	}
}

func webPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = webPod(i)
	}
	return pods
}

// launchedClaim is a claim as launch creates it, narrowed to one type, zone and capacity.
func launchedClaim(instanceType, zone string) *v1beta1.NodeClaim {
	in := func(key, value string) v1beta1.NodeSelectorRequirement {
		return v1beta1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}
	}
	return &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1beta1.AnnotationTemplateHash: "h1"}},
		Spec: v1beta1.NodeClaimSpec{
			NodePool:     "general",
			NodeClassRef: v1beta1.NodeClassReference{Name: "default"},
			Requirements: []v1beta1.NodeSelectorRequirement{
				{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{"spot", "on-demand"}},
				in(corev1.LabelInstanceTypeStable, instanceType), in(corev1.LabelTopologyZone, zone), in(v1beta1.LabelCapacityType, "on-demand"),
			},
		},
	}
}

// warmClaim is a standby claim that launched its instance already.
func warmClaim(instanceType, zone string) *v1beta1.NodeClaim {
	c := launchedClaim(instanceType, zone)
	c.Spec.Requirements = nil
	c.Status.InstanceType, c.Status.Zone, c.Status.CapacityType = instanceType, zone, "on-demand"
	return c
}

func TestReservationMatters(t *testing.T) {
	alike := []*v1beta1.NodeClaim{launchedClaim("m5.large", "us-east-1a"), warmClaim("m5.large", "us-east-1a"), launchedClaim("m5.large", "us-east-1a")}
	oneDiffers := func(change func(*corev1.Pod)) []*corev1.Pod {
		pods := webPods(6)
		change(pods[4])
		return pods
	}
	for _, tc := range []struct {
		name   string
		pods   []*corev1.Pod
		claims []*v1beta1.NodeClaim
		want   bool
	}{
		{name: "identical pods on alike claims: skipped", pods: webPods(6), claims: alike, want: false},
		{name: "an old reservation toleration does not make a pod differ", pods: oneDiffers(func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, ReservationToleration("general-old"))
		}), claims: alike, want: false},
		{name: "one pod with a larger request", pods: oneDiffers(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
		}), claims: alike, want: true},
		{name: "one pod with another nodeSelector", pods: oneDiffers(func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"}
		}), claims: alike, want: true},
		{name: "one pod with hostname anti-affinity", pods: oneDiffers(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			}}}}
		}), claims: alike, want: true},
		{name: "one pod with a claim to a volume", pods: oneDiffers(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
		}), claims: alike, want: true},
		// Identical pods fit any claim the decision chose for one of them.
		{name: "identical pods on claims in two zones: skipped", pods: webPods(6), claims: []*v1beta1.NodeClaim{launchedClaim("m5.large", "us-east-1a"), launchedClaim("m5.large", "us-east-1b")}, want: false},
		{name: "identical pods on a warm claim and a launch of another type: skipped", pods: webPods(6), claims: []*v1beta1.NodeClaim{warmClaim("m5.large", "us-east-1a"), launchedClaim("c5.xlarge", "us-east-1a")}, want: false},
		{name: "identical pods on claims of two pools: skipped", pods: webPods(6), claims: func() []*v1beta1.NodeClaim {
			other := launchedClaim("m5.large", "us-east-1a")
			other.Spec.NodePool = "batch"
			return []*v1beta1.NodeClaim{launchedClaim("m5.large", "us-east-1a"), other}
		}(), want: false},
		{name: "pods of two shapes on alike claims", pods: oneDiffers(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("2Gi")
		}), claims: []*v1beta1.NodeClaim{launchedClaim("m5.large", "us-east-1a"), launchedClaim("c5.xlarge", "us-east-1b")}, want: true},
		{name: "no claim given pods", pods: webPods(2), claims: nil, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reservationMatters(tc.pods, tc.claims); got != tc.want {
				t.Errorf("reservationMatters = %v, want %v", got, tc.want)
			}
		})
	}
}
