package runner

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

const (
	fieldManager = "stratos-sim"
	defaultImage = "registry.k8s.io/pause:3.10"
)

var topologyKeys = map[string]string{"zone": corev1.LabelTopologyZone, "hostname": corev1.LabelHostname}

// deployment is the Deployment of a burst: identical pods with the burst's requests,
// selectors and spread, labelled as workload pods.
func deployment(w *scenario.Workload) *appsv1.Deployment {
	labels := map[string]string{WorkloadLabel: w.Name}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	image := w.Image
	if image == "" {
		image = defaultImage
	}
	pod := corev1.PodSpec{
		NodeSelector: w.NodeSelector,
		// The simulated kubelets stop containers at once; a grace period would only
		// delay the give-back the scenarios measure.
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{
			Name:  "app",
			Image: image,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(w.CPU),
				corev1.ResourceMemory: resource.MustParse(w.Memory),
			}},
		}},
	}
	for _, key := range w.Spread {
		pod.TopologySpreadConstraints = append(pod.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: topologyKeys[key], WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector,
		})
	}
	for _, claim := range w.Claims {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		}})
	}
	if w.AntiAffinity != "" {
		pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: topologyKeys[w.AntiAffinity], LabelSelector: selector}},
		}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: namespaceOf(w.WorkloadRef), Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(w.Replicas),
			Selector: selector,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
}

func namespaceOf(ref scenario.WorkloadRef) string {
	if ref.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return ref.Namespace
}

// createWorkload creates a burst's Deployment, and its namespace when missing.
func createWorkload(ctx context.Context, c client.Client, w *scenario.Workload) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(w.WorkloadRef)}}
	if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	return c.Create(ctx, deployment(w))
}

// scaleWorkload sets the replicas of a burst's Deployment.
func scaleWorkload(ctx context.Context, c client.Client, s *scenario.Scale) error {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: namespaceOf(s.WorkloadRef)}}
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, s.Replicas))
	return c.Patch(ctx, d, patch)
}

// deleteWorkload deletes a burst's Deployment; the garbage collector deletes its pods.
func deleteWorkload(ctx context.Context, c client.Client, ref *scenario.WorkloadRef) error {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: namespaceOf(*ref)}}
	return c.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationBackground))
}

// apply creates or updates objects with server-side apply; namespaced objects without a
// namespace go to "default".
func apply(ctx context.Context, c client.Client, objects []unstructured.Unstructured) error {
	for i := range objects {
		obj := objects[i].DeepCopy()
		namespaced, err := c.IsObjectNamespaced(obj)
		if err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if namespaced && obj.GetNamespace() == "" {
			obj.SetNamespace(metav1.NamespaceDefault)
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}
