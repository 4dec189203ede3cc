package volumes

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	csitranslation "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"
)

// The EBS CSI driver's name and zone label.
const (
	EBSDriver    = "ebs.csi.aws.com"
	EBSZoneLabel = "topology.ebs.csi.aws.com/zone"
)

// zoneAliases are labels that name a node's zone as topology.kubernetes.io/zone does: the
// EBS CSI driver's own (zonal EBS volumes made by older driver releases carry it in
// their node affinity, and the driver labels every node with it) and the deprecated
// beta label of volumes made before Kubernetes 1.17. A node Stratos makes will carry
// them with its zone, so a volume's affinity is read with the canonical key.
var zoneAliases = map[string]string{
	EBSZoneLabel:                        corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
}

// Canonical returns a copy of selector whose requirements name zones and regions by the
// canonical labels rather than their aliases.
func Canonical(selector corev1.NodeSelector) corev1.NodeSelector {
	out := corev1.NodeSelector{NodeSelectorTerms: make([]corev1.NodeSelectorTerm, len(selector.NodeSelectorTerms))}
	for i, term := range selector.NodeSelectorTerms {
		t := term.DeepCopy()
		for j := range t.MatchExpressions {
			if canonical, ok := zoneAliases[t.MatchExpressions[j].Key]; ok {
				t.MatchExpressions[j].Key = canonical
			}
		}
		out.NodeSelectorTerms[i] = *t
	}
	return out
}

// translator turns in-tree volumes (awsElasticBlockStore and the like) into the CSI
// volumes they are migrated to, as kube-scheduler does to count them.
var translator = csitranslation.New()

// attachmentOf is the attachment a bound volume makes: its CSI driver and handle, those
// of the CSI driver an in-tree volume migrated to, or none for a volume no driver
// attaches (a local or NFS volume, say).
func attachmentOf(pv *corev1.PersistentVolume) (Attachment, bool) {
	if pv.Spec.CSI == nil && translator.IsPVMigratable(pv) {
		if migrated, err := translator.TranslateInTreePVToCSI(klog.Background(), pv); err == nil {
			pv = migrated
		}
	}
	if pv.Spec.CSI == nil {
		return Attachment{}, false
	}
	return Attachment{Driver: pv.Spec.CSI.Driver, ID: pv.Spec.CSI.VolumeHandle}, true
}

// Limits returns the most volumes each CSI driver may attach to a node, by driver name,
// as the node's CSINode allocatable counts say; a driver absent is unlimited.
func Limits(csiNode *storagev1.CSINode) map[string]int64 {
	if csiNode == nil {
		return nil
	}
	var limits map[string]int64
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable == nil || d.Allocatable.Count == nil {
			continue
		}
		if limits == nil {
			limits = map[string]int64{}
		}
		limits[d.Name] = int64(*d.Allocatable.Count)
	}
	return limits
}
