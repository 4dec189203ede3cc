package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/scheduling/verifier"
	"github.com/stratos-sh/stratos/internal/volumes"
)

// storageFixture holds the storage objects of a test: the simulation reads what they
// ask through package volumes, as the operator does, and the verifier reads the objects
// themselves.
type storageFixture struct {
	claims   map[string]*corev1.PersistentVolumeClaim
	volumes  map[string]*corev1.PersistentVolume
	classes  map[string]*storagev1.StorageClass
	csiNodes map[string]*storagev1.CSINode
}

func newStorageFixture() *storageFixture {
	return &storageFixture{claims: map[string]*corev1.PersistentVolumeClaim{}, volumes: map[string]*corev1.PersistentVolume{},
		classes: map[string]*storagev1.StorageClass{}, csiNodes: map[string]*storagev1.CSINode{}}
}

func (f *storageFixture) Claim(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return f.claims[namespace+"/"+name], nil
}
func (f *storageFixture) Volume(name string) (*corev1.PersistentVolume, error) {
	return f.volumes[name], nil
}
func (f *storageFixture) Class(name string) (*storagev1.StorageClass, error) {
	return f.classes[name], nil
}
func (f *storageFixture) DefaultClass() (*storagev1.StorageClass, error) { return nil, nil }

// class adds a StorageClass of the EBS driver binding as mode, allowed in zones (any
// zone when none).
func (f *storageFixture) class(name string, mode storagev1.VolumeBindingMode, zones ...string) {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: volumes.EBSDriver, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		c.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: zones}}}}
	}
	f.classes[name] = c
}

// boundClaim adds a claim in namespace default bound to a volume of the EBS driver
// whose node affinity holds it to zone under key (the zone label or one of its aliases).
func (f *storageFixture) boundClaim(name, key, zone string) {
	f.boundClaimIn("default", name, key, zone)
}

func (f *storageFixture) boundClaimIn(namespace, name, key, zone string) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + namespace + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: volumes.EBSDriver, VolumeHandle: "vol-" + namespace + "-" + name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
			}}}},
			ClaimRef: &corev1.ObjectReference{Namespace: namespace, Name: name},
		},
	}
	f.volumes[pv.Name] = pv
	f.claims[namespace+"/"+name] = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv.Name}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
}

// unboundClaim adds a claim in namespace default of class, not bound yet.
func (f *storageFixture) unboundClaim(name, class string) { f.unboundClaimIn("default", name, class) }

func (f *storageFixture) unboundClaimIn(namespace, name, class string) {
	f.claims[namespace+"/"+name] = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class)}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
}

// csiNode publishes a node's EBS attach limit.
func (f *storageFixture) csiNode(node string, limit int32) {
	f.csiNodes[node] = &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: volumes.EBSDriver, NodeID: node, Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To(limit)}},
	}}}
}

// fill sets what the input's pods' volumes ask, and the nodes' attach limits, as the
// operator's simulation input does.
func (f *storageFixture) fill(t testing.TB, in *Input) {
	t.Helper()
	in.Volumes = map[types.UID]volumes.Needs{}
	all := append([]*corev1.Pod(nil), in.Pods...)
	for i := range in.Nodes {
		all = append(all, in.Nodes[i].Pods...)
		in.Nodes[i].AttachLimits = volumes.Limits(f.csiNodes[in.Nodes[i].Node.Name])
	}
	for _, c := range in.Claims {
		all = append(all, c.Pods...)
	}
	for _, pod := range all {
		if pod.UID == "" {
			pod.UID = types.UID(pod.Namespace + "/" + pod.Name)
		}
		if !volumes.HasClaims(pod) {
			continue
		}
		needs, err := volumes.For(pod, f)
		if err != nil {
			t.Fatal(err)
		}
		in.Volumes[pod.UID] = needs
	}
}

// verifierStorage is the objects, for the verifier.
func (f *storageFixture) verifierStorage() verifier.Storage {
	var s verifier.Storage
	for _, c := range f.claims {
		s.Claims = append(s.Claims, c)
	}
	for _, v := range f.volumes {
		s.Volumes = append(s.Volumes, v)
	}
	for _, c := range f.classes {
		s.Classes = append(s.Classes, c)
	}
	for _, c := range f.csiNodes {
		s.CSINodes = append(s.CSINodes, c)
	}
	return s
}

// mounting makes a pod mount the named claims.
func mounting(claims ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c},
			}})
		}
	}
}

// ephemeralOf makes a pod use a generic ephemeral volume of class.
func ephemeralOf(class string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: ptr.To(class),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			}},
		}}})
	}
}

// withAttachLimit gives the catalogue's types an EBS attach limit.
func withAttachLimit(types []*cloudprovider.InstanceType, limit int64) []*cloudprovider.InstanceType {
	for _, t := range types {
		t.AttachLimits = map[string]int64{volumes.EBSDriver: limit}
	}
	return types
}
