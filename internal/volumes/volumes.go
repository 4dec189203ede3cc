// Package volumes tells what a pod's volumes ask of the node it runs on, as
// kube-scheduler's VolumeBinding and NodeVolumeLimits plugins see them: the node
// affinity of the PersistentVolumes bound to its claims, the allowed topologies of the
// WaitForFirstConsumer classes of its claims not bound yet, the volumes a CSI driver
// attaches to the node for it, and claims that keep it waiting whatever the node. It is
// pure: the objects come through a Lister (a cache in the operator, maps in tests).
package volumes

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
)

// Lister finds the storage objects a pod's volumes name. A missing object is nil with
// no error; an error is a failure to read.
type Lister interface {
	Claim(namespace, name string) (*corev1.PersistentVolumeClaim, error)
	Volume(name string) (*corev1.PersistentVolume, error)
	Class(name string) (*storagev1.StorageClass, error)
	// DefaultClass is the class a claim that names none gets, or nil.
	DefaultClass() (*storagev1.StorageClass, error)
}

// Attachment is a volume a CSI driver attaches to the pod's node: one per ID, however
// many pods on the node use it.
type Attachment struct {
	Driver string
	ID     string
}

// Needs is what a pod's volumes ask of its node.
type Needs struct {
	// Selectors must all match the node: the node affinity of each volume bound to the
	// pod's claims, and the allowed topologies of each WaitForFirstConsumer class of its
	// claims not bound yet. Zone aliases are written as topology.kubernetes.io/zone
	// (see Canonical).
	Selectors []corev1.NodeSelector
	// Attachments are the volumes attached to the node for the pod.
	Attachments []Attachment
	// Wait, when set, says why no node can take the pod now: a claim that does not exist,
	// is being deleted, lost its volume, or is not bound yet and binds at once (not
	// WaitForFirstConsumer), or a volume or class it names that does not exist. kube-scheduler keeps such a pod
	// pending until the claim is fixed or bound, so no node is made for it.
	Wait string
}

// None reports whether the pod's volumes ask nothing of its node.
func (n Needs) None() bool {
	return len(n.Selectors) == 0 && len(n.Attachments) == 0 && n.Wait == ""
}

// SelectorsKey identifies the selectors: pods whose volumes have the same selectors
// match the same nodes. It is "" when there are none.
func (n Needs) SelectorsKey() string {
	if len(n.Selectors) == 0 {
		return ""
	}
	key, _ := json.Marshal(n.Selectors)
	return string(key)
}

// HasClaims reports whether any of the pod's volumes is a claim: a persistent one or a
// generic ephemeral one.
func HasClaims(pod *corev1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[i]; v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}

// For works out what pod's volumes ask of its node. The error is the Lister's.
func For(pod *corev1.Pod, l Lister) (Needs, error) {
	var n Needs
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var err error
		switch {
		case v.PersistentVolumeClaim != nil:
			err = n.addClaim(pod, v.PersistentVolumeClaim.ClaimName, l)
		case v.Ephemeral != nil:
			err = n.addEphemeral(pod, v, l)
		}
		if err != nil || n.Wait != "" {
			return n, err
		}
	}
	return n, nil
}

// addClaim adds what the pod's claim of that name asks.
func (n *Needs) addClaim(pod *corev1.Pod, name string, l Lister) error {
	claim, err := l.Claim(pod.Namespace, name)
	switch {
	case err != nil:
		return err
	case claim == nil:
		n.Wait = fmt.Sprintf("PersistentVolumeClaim %s/%s does not exist", pod.Namespace, name)
		return nil
	}
	return n.addExistingClaim(claim, l)
}

// addEphemeral adds what a generic ephemeral volume asks: its claim's, once the
// ephemeral volume controller has made it; until then, an unbound claim of its
// template's class, which the claim will be.
func (n *Needs) addEphemeral(pod *corev1.Pod, v *corev1.Volume, l Lister) error {
	name := ephemeral.VolumeClaimName(pod, v)
	claim, err := l.Claim(pod.Namespace, name)
	if err != nil {
		return err
	}
	if claim != nil {
		if err := ephemeral.VolumeIsForPod(pod, claim); err != nil {
			n.Wait = err.Error()
			return nil
		}
		return n.addExistingClaim(claim, l)
	}
	if v.Ephemeral.VolumeClaimTemplate == nil {
		n.Wait = fmt.Sprintf("generic ephemeral volume %s has no claim template", v.Name)
		return nil
	}
	template := &corev1.PersistentVolumeClaim{Spec: v.Ephemeral.VolumeClaimTemplate.Spec}
	template.Namespace, template.Name = pod.Namespace, name
	return n.addUnbound(template, true, l)
}

// addExistingClaim adds what a claim that exists asks.
func (n *Needs) addExistingClaim(claim *corev1.PersistentVolumeClaim, l Lister) error {
	switch {
	case !claim.DeletionTimestamp.IsZero():
		n.Wait = fmt.Sprintf("PersistentVolumeClaim %s/%s is being deleted", claim.Namespace, claim.Name)
		return nil
	case claim.Status.Phase == corev1.ClaimLost:
		n.Wait = fmt.Sprintf("PersistentVolumeClaim %s/%s lost its PersistentVolume %s", claim.Namespace, claim.Name, claim.Spec.VolumeName)
		return nil
	}
	if claim.Spec.VolumeName == "" {
		return n.addUnbound(claim, false, l)
	}
	pv, err := l.Volume(claim.Spec.VolumeName)
	switch {
	case err != nil:
		return err
	case pv == nil:
		n.Wait = fmt.Sprintf("PersistentVolumeClaim %s/%s is bound to PersistentVolume %s, which does not exist", claim.Namespace, claim.Name, claim.Spec.VolumeName)
		return nil
	}
	if pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil {
		n.Selectors = append(n.Selectors, Canonical(*pv.Spec.NodeAffinity.Required))
	}
	if a, ok := attachmentOf(pv); ok {
		n.Attachments = append(n.Attachments, a)
	}
	return nil
}

// addUnbound adds what a claim not bound yet asks: a WaitForFirstConsumer class's
// allowed topologies, and the volume its provisioner will attach. A claim of a class
// that binds at once waits for its binding, as kube-scheduler makes the pod wait. A
// template stands for a claim the ephemeral volume controller has yet to create, which
// gets the default class if it names none.
func (n *Needs) addUnbound(claim *corev1.PersistentVolumeClaim, template bool, l Lister) error {
	name := volume.GetPersistentVolumeClaimClass(claim)
	var class *storagev1.StorageClass
	var err error
	switch {
	case name != "":
		class, err = l.Class(name)
	case template && claim.Spec.StorageClassName == nil:
		class, err = l.DefaultClass()
	}
	switch {
	case err != nil:
		return err
	case class == nil && name == "":
		n.Wait = fmt.Sprintf("PersistentVolumeClaim %s/%s is not bound and has no StorageClass: only a PersistentVolume made for it can bind it", claim.Namespace, claim.Name)
		return nil
	case class == nil:
		n.Wait = fmt.Sprintf("PersistentVolumeClaim %s/%s is not bound and its StorageClass %s does not exist", claim.Namespace, claim.Name, name)
		return nil
	case class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer:
		n.Wait = fmt.Sprintf("PersistentVolumeClaim %s/%s is not bound yet, and its StorageClass %s binds at once (Immediate), not when a pod is placed", claim.Namespace, claim.Name, class.Name)
		return nil
	}
	if selector, ok := allowedTopologies(class); ok {
		n.Selectors = append(n.Selectors, selector)
	}
	n.Attachments = append(n.Attachments, Attachment{Driver: class.Provisioner, ID: claim.Namespace + "/" + claim.Name})
	return nil
}

// allowedTopologies is a class's allowed topologies as a node selector: any term, each
// with every requirement of it.
func allowedTopologies(class *storagev1.StorageClass) (corev1.NodeSelector, bool) {
	if len(class.AllowedTopologies) == 0 {
		return corev1.NodeSelector{}, false
	}
	var selector corev1.NodeSelector
	for _, term := range class.AllowedTopologies {
		var t corev1.NodeSelectorTerm
		for _, r := range term.MatchLabelExpressions {
			t.MatchExpressions = append(t.MatchExpressions, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOpIn, Values: r.Values})
		}
		selector.NodeSelectorTerms = append(selector.NodeSelectorTerms, t)
	}
	return Canonical(selector), true
}
