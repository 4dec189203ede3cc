package stack

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/internal/volumes"
)

// Volume creates the EBS volume pv-NAME of class ("" for none) in zone, with the node
// affinity the EBS CSI driver gives such a volume, naming the zone by key (the zone
// label or the driver's own).
func (f *Fixture) Volume(name, class, key, zone string) {
	f.T.Helper()
	f.Create(&corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:       class,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: volumes.EBSDriver, VolumeHandle: "vol-" + name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
			}}}},
		},
	})
}

// VolumeClaim creates a claim in namespace default of class ("" for none), bound to
// volume when set, as the volume controller leaves a bound one.
func (f *Fixture) VolumeClaim(name, class, volume string) *corev1.PersistentVolumeClaim {
	f.T.Helper()
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			VolumeName:       volume,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}
	f.Create(claim)
	return claim
}

// ZonalClaim creates an EBS volume in zone and a claim of the same name bound to it, and
// returns what makes a pod mount the claim.
func (f *Fixture) ZonalClaim(name, zone string) func(*corev1.Pod) {
	f.T.Helper()
	f.Volume(name, "", corev1.LabelTopologyZone, zone)
	f.VolumeClaim(name, "", "pv-"+name)
	return Mounting(name)
}

// Mounting makes a pod mount a claim.
func Mounting(claim string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		}})
	}
}
