package capacitybuffer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

// AnnotationTemplateHash on a PodTemplate made from a workload is the hash of the
// workload's pod template it was made from: the template is rewritten only when the
// workload's changes, not on every pass (the API server defaults what Stratos writes, so
// the two never compare equal).
const AnnotationTemplateHash = "stratos.sh/template-hash"

// failure is why a buffer does not resolve: the reason of its ReadyForProvisioning
// condition and a message for users.
type failure struct {
	reason, message string
	// unwatched: nothing the controller watches tells when this may change (a workload
	// of a kind it does not watch), so the buffer is looked at again after a while.
	unwatched bool
}

func (f *failure) Error() string { return f.reason + ": " + f.message }

// source is what a buffer's chunks are made from.
type source struct {
	// template is the chunk's pod template.
	template *corev1.PodTemplateSpec
	// workloadReplicas are the scalableRef's current replicas (spec.replicas).
	workloadReplicas int32
	// unwatched: the workload's kind is read, not watched.
	unwatched bool
}

// watchedKinds are the workloads whose changes the controller watches, by kind in the
// apps group.
var watchedKinds = map[string]client.Object{
	"Deployment":  &appsv1.Deployment{},
	"ReplicaSet":  &appsv1.ReplicaSet{},
	"StatefulSet": &appsv1.StatefulSet{},
}

// scalableGroup is the API group of a scalableRef. An empty group with a kind of the apps
// group (Deployment, ReplicaSet, StatefulSet) means apps: the core group has no such
// kinds, and buffers are often written that way.
func scalableGroup(ref *autoscalingv1beta1.ScalableRef) string {
	if _, ok := watchedKinds[ref.Kind]; ok && ref.APIGroup == "" {
		return appsv1.GroupName
	}
	return ref.APIGroup
}

// readWorkload reads the scalableRef's pod template and replicas. The apps kinds are
// read typed; any other kind through its unstructured spec.template and spec.replicas,
// when the cluster serves it and Stratos may read it. Reads go to the API server, not to
// a cache: the controller watches the workloads' metadata only, so that it does not hold
// every Deployment and ReplicaSet of the cluster in memory.
func (r *Reconciler) readWorkload(ctx context.Context, namespace string, ref *autoscalingv1beta1.ScalableRef) (*source, error) {
	group := scalableGroup(ref)
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	what := fmt.Sprintf("%s %s", qualifiedKind(group, ref.Kind), ref.Name)
	if group == appsv1.GroupName {
		if proto, ok := watchedKinds[ref.Kind]; ok {
			obj := proto.DeepCopyObject().(client.Object)
			if err := r.APIReader.Get(ctx, key, obj); err != nil {
				return nil, workloadError(err, what)
			}
			return appsSource(obj), nil
		}
	}
	mapping, err := r.Mapper.RESTMapping(schema.GroupKind{Group: group, Kind: ref.Kind})
	if meta.IsNoMatchError(err) {
		return nil, &failure{reason: ReasonScalableKindUnsupported, unwatched: true,
			message: fmt.Sprintf("The cluster serves no kind %s", qualifiedKind(group, ref.Kind))}
	}
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return nil, &failure{reason: ReasonScalableKindUnsupported,
			message: fmt.Sprintf("%s is cluster-scoped; a scalableRef names a workload in the buffer's namespace", qualifiedKind(group, ref.Kind))}
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := r.APIReader.Get(ctx, key, obj); err != nil {
		return nil, workloadError(err, what)
	}
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "template")
	if err != nil || !found {
		return nil, &failure{reason: ReasonScalableKindUnsupported, unwatched: true,
			message: fmt.Sprintf("%s has no pod template at spec.template", what)}
	}
	template := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, template); err != nil {
		return nil, &failure{reason: ReasonTemplateInvalid, unwatched: true,
			message: fmt.Sprintf("spec.template of %s is not a pod template: %v", what, err)}
	}
	replicas, found, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if err != nil {
		return nil, &failure{reason: ReasonScalableKindUnsupported, unwatched: true,
			message: fmt.Sprintf("spec.replicas of %s is not a number", what)}
	}
	if !found {
		replicas = 1 // the default of every workload API with a scale subresource
	}
	return &source{template: template, workloadReplicas: int32(replicas), unwatched: true}, nil
}

// workloadError turns a failed read of a workload into the buffer's reason, or returns
// it for a retry when it says nothing about the buffer.
func workloadError(err error, what string) error {
	switch {
	case apierrors.IsNotFound(err):
		return &failure{reason: ReasonScalableNotFound, message: fmt.Sprintf("%s does not exist", what)}
	case apierrors.IsForbidden(err):
		return &failure{reason: ReasonScalableKindUnsupported, unwatched: true,
			message: fmt.Sprintf("Stratos may not read %s; Stratos reads Deployments, ReplicaSets and StatefulSets, and other kinds its role allows: %v", what, err)}
	}
	return err
}

func appsSource(obj client.Object) *source {
	var replicas *int32
	var template corev1.PodTemplateSpec
	switch w := obj.(type) {
	case *appsv1.Deployment:
		replicas, template = w.Spec.Replicas, w.Spec.Template
	case *appsv1.ReplicaSet:
		replicas, template = w.Spec.Replicas, w.Spec.Template
	case *appsv1.StatefulSet:
		replicas, template = w.Spec.Replicas, w.Spec.Template
	}
	n := int32(1) // the API's default
	if replicas != nil {
		n = *replicas
	}
	return &source{template: &template, workloadReplicas: n}
}

func qualifiedKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

// ownedTemplateName is the name of the PodTemplate Stratos makes for a buffer of a
// workload, as Cluster Autoscaler names it.
func ownedTemplateName(buffer string) string {
	name := "capacitybuffer-" + buffer
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(buffer))
	return name[:253-9] + "-" + hex.EncodeToString(sum[:4])
}

// ensureTemplate makes or updates the PodTemplate of a buffer of a workload: its
// template is the workload's pod template, and it is owned by the buffer (a controller
// reference), so that garbage collection removes it with the buffer.
func (r *Reconciler) ensureTemplate(ctx context.Context, buffer *autoscalingv1beta1.CapacityBuffer, template *corev1.PodTemplateSpec) (*corev1.PodTemplate, error) {
	hash, err := templateHash(template)
	if err != nil {
		return nil, err
	}
	name := ownedTemplateName(buffer.Name)
	current := &corev1.PodTemplate{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: buffer.Namespace, Name: name}, current)
	if apierrors.IsNotFound(err) {
		made := &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: buffer.Namespace, Name: name, Annotations: map[string]string{AnnotationTemplateHash: hash}},
			Template:   *template.DeepCopy(),
		}
		if err := controllerutil.SetControllerReference(buffer, made, r.Client.Scheme()); err != nil {
			return nil, err
		}
		if err := r.Client.Create(ctx, made); err != nil {
			return nil, err
		}
		return made, nil
	}
	if err != nil {
		return nil, err
	}
	if !metav1.IsControlledBy(current, buffer) {
		return nil, &failure{reason: ReasonPodTemplateConflict,
			message: fmt.Sprintf("PodTemplate %s exists and is not this buffer's; Stratos names the template of a buffer of a workload so", name)}
	}
	if current.Annotations[AnnotationTemplateHash] == hash {
		return current, nil
	}
	updated := current.DeepCopy()
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[AnnotationTemplateHash] = hash
	updated.Template = *template.DeepCopy()
	if err := r.Client.Update(ctx, updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// templateHash identifies a workload's pod template.
func templateHash(template *corev1.PodTemplateSpec) (string, error) {
	data, err := json.Marshal(template)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}

// checkTemplate refuses a template no pod could be made of.
func checkTemplate(template *corev1.PodTemplateSpec, what string) error {
	if len(template.Spec.Containers) == 0 {
		return &failure{reason: ReasonTemplateInvalid, message: fmt.Sprintf("The pod template of %s has no containers", what)}
	}
	return nil
}
