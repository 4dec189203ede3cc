package verifier

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
)

// storage indexes the objects of a Storage by the names the volume filters look them up by.
type storage struct {
	claims   map[string]*corev1.PersistentVolumeClaim // by namespace/name
	volumes  map[string]*corev1.PersistentVolume
	classes  map[string]*storagev1.StorageClass
	csiNodes map[string]*storagev1.CSINode
	// allowed caches each class's allowed topologies as a node selector.
	allowed map[string]*nodeaffinity.LazyErrorNodeSelector
	// byPod caches each pod's claims: a pod is filtered on many nodes.
	byPod map[*corev1.Pod][]podClaim
}

func newStorage(s Storage) *storage {
	st := &storage{
		claims:   map[string]*corev1.PersistentVolumeClaim{},
		volumes:  map[string]*corev1.PersistentVolume{},
		classes:  map[string]*storagev1.StorageClass{},
		csiNodes: map[string]*storagev1.CSINode{},
		allowed:  map[string]*nodeaffinity.LazyErrorNodeSelector{},
		byPod:    map[*corev1.Pod][]podClaim{},
	}
	for _, c := range s.Claims {
		st.claims[c.Namespace+"/"+c.Name] = c
	}
	for _, v := range s.Volumes {
		st.volumes[v.Name] = v
	}
	for _, c := range s.Classes {
		st.classes[c.Name] = c
		st.allowed[c.Name] = topologySelector(c.AllowedTopologies)
	}
	for _, c := range s.CSINodes {
		st.csiNodes[c.Name] = c
	}
	return st
}

// podClaim is a claim a pod's volume uses, as the volume filters read it.
type podClaim struct {
	key string // namespace/name
	// refused says why no node can take the pod for this claim; empty if some can.
	refused string
	// pv is the volume a bound claim is bound to.
	pv *corev1.PersistentVolume
	// class is the WaitForFirstConsumer class of an unbound claim, and allowed its
	// allowed topologies (nil: anywhere).
	class   *storagev1.StorageClass
	allowed *nodeaffinity.LazyErrorNodeSelector
	// attach is the volume the claim attaches to its node; zero when none is counted.
	attach volumeID
}

// volumeID names an attached volume uniquely: a CSI volume by its driver and handle, a
// claim not yet provisioned by its driver and the claim.
type volumeID struct {
	driver, handle, claim string
}

// claimsOf returns the claims of pod's persistentVolumeClaim and ephemeral volumes.
func (s *storage) claimsOf(pod *corev1.Pod) []podClaim {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	if out, ok := s.byPod[pod]; ok {
		return out
	}
	var out []podClaim
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, s.resolve(pod, v.PersistentVolumeClaim.ClaimName, nil))
		case v.Ephemeral != nil:
			out = append(out, s.resolve(pod, ephemeral.VolumeClaimName(pod, v), v.Ephemeral))
		}
	}
	s.byPod[pod] = out
	return out
}

// resolve reads the claim named name in pod's namespace. An ephemeral volume whose claim
// the ephemeral volume controller has not created yet stands for the claim its template
// makes, unbound.
func (s *storage) resolve(pod *corev1.Pod, name string, eph *corev1.EphemeralVolumeSource) podClaim {
	pc := podClaim{key: pod.Namespace + "/" + name}
	claim, ok := s.claims[pc.key]
	switch {
	case !ok && eph != nil && eph.VolumeClaimTemplate != nil:
		t := eph.VolumeClaimTemplate
		claim = &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name, Labels: t.Labels, Annotations: t.Annotations},
			Spec:       t.Spec,
		}
	case !ok:
		pc.refused = fmt.Sprintf("claim %s does not exist", pc.key)
		return pc
	case eph != nil:
		if err := ephemeral.VolumeIsForPod(pod, claim); err != nil {
			pc.refused = err.Error()
			return pc
		}
	}
	switch {
	case claim.DeletionTimestamp != nil:
		pc.refused = fmt.Sprintf("claim %s is being deleted", pc.key)
	case claim.Status.Phase == corev1.ClaimLost:
		pc.refused = fmt.Sprintf("claim %s lost its volume %s", pc.key, claim.Spec.VolumeName)
	case claim.Spec.VolumeName != "":
		s.resolveBound(&pc, claim)
	default:
		s.resolveUnbound(&pc, claim)
	}
	return pc
}

// resolveBound finds the volume of a bound claim, attached by its CSI driver and handle.
// A volume that is missing counts by the claim's class, as kube-scheduler counts it.
func (s *storage) resolveBound(pc *podClaim, claim *corev1.PersistentVolumeClaim) {
	pv, ok := s.volumes[claim.Spec.VolumeName]
	if !ok {
		pc.refused = fmt.Sprintf("claim %s is bound to volume %s, which does not exist", pc.key, claim.Spec.VolumeName)
		if class, ok := s.classes[volume.GetPersistentVolumeClaimClass(claim)]; ok {
			pc.attach = volumeID{driver: class.Provisioner, claim: pc.key}
		}
		return
	}
	pc.pv = pv
	if csi := pv.Spec.CSI; csi != nil {
		pc.attach = volumeID{driver: csi.Driver, handle: csi.VolumeHandle}
	}
}

// resolveUnbound finds the class of an unbound claim. Only a WaitForFirstConsumer class
// leaves the choice of the node to the scheduler; an Immediate claim waits for the
// persistent volume controller, and kube-scheduler places its pod nowhere until then.
func (s *storage) resolveUnbound(pc *podClaim, claim *corev1.PersistentVolumeClaim) {
	name := volume.GetPersistentVolumeClaimClass(claim)
	class, ok := s.classes[name]
	switch {
	case name == "":
		pc.refused = fmt.Sprintf("unbound claim %s has no storage class", pc.key)
		return
	case !ok:
		pc.refused = fmt.Sprintf("the storage class %s of unbound claim %s does not exist", name, pc.key)
		return
	}
	pc.attach = volumeID{driver: class.Provisioner, claim: pc.key}
	if mode := class.VolumeBindingMode; mode == nil || *mode != storagev1.VolumeBindingWaitForFirstConsumer {
		pc.refused = fmt.Sprintf("unbound claim %s has the Immediate class %s: it waits to be bound", pc.key, name)
		return
	}
	pc.class, pc.allowed = class, s.allowed[name]
}
