package volumes

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// objects is a Lister over maps.
type objects struct {
	claims       map[string]*corev1.PersistentVolumeClaim
	volumes      map[string]*corev1.PersistentVolume
	classes      map[string]*storagev1.StorageClass
	defaultClass *storagev1.StorageClass
}

func (o objects) Claim(ns, name string) (*corev1.PersistentVolumeClaim, error) {
	return o.claims[ns+"/"+name], nil
}
func (o objects) Volume(name string) (*corev1.PersistentVolume, error) { return o.volumes[name], nil }
func (o objects) Class(name string) (*storagev1.StorageClass, error)   { return o.classes[name], nil }
func (o objects) DefaultClass() (*storagev1.StorageClass, error)       { return o.defaultClass, nil }

func zoneSelector(key string, zones ...string) corev1.NodeSelector {
	return corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: zones}}}}}
}

func claim(name string, mutate func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	mutate(c)
	return c
}

func class(name string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: EBSDriver, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		c.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: EBSZoneLabel, Values: zones}}}}
	}
	return c
}

func podWith(volumes ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod", UID: "pod-uid"}, Spec: corev1.PodSpec{Volumes: volumes}}
}

func claimVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
}

func ephemeralVolume(name string, className *string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: className}},
	}}}
}

func TestFor(t *testing.T) {
	bound := func(volume string) func(*corev1.PersistentVolumeClaim) {
		return func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = volume }
	}
	ofClass := func(name string) func(*corev1.PersistentVolumeClaim) {
		return func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To(name) }
	}
	store := objects{
		claims: map[string]*corev1.PersistentVolumeClaim{
			"ns/zonal":     claim("zonal", bound("pv-zonal")),
			"ns/intree":    claim("intree", bound("pv-intree")),
			"ns/local":     claim("local", bound("pv-local")),
			"ns/dangling":  claim("dangling", bound("pv-missing")),
			"ns/wffc":      claim("wffc", ofClass("wffc")),
			"ns/immediate": claim("immediate", ofClass("immediate")),
			"ns/noclass":   claim("noclass", ofClass("")),
			"ns/unknown":   claim("unknown", ofClass("unknown")),
			"ns/deleting":  claim("deleting", func(c *corev1.PersistentVolumeClaim) { c.DeletionTimestamp = ptr.To(metav1.Now()) }),
			"ns/lost": claim("lost", func(c *corev1.PersistentVolumeClaim) {
				c.Spec.VolumeName, c.Status.Phase = "pv-zonal", corev1.ClaimLost
			}),
			"ns/pod-other": claim("pod-other", ofClass("wffc")), // named as pod's ephemeral volume "other", not owned by it
		},
		volumes: map[string]*corev1.PersistentVolume{
			"pv-zonal": {ObjectMeta: metav1.ObjectMeta{Name: "pv-zonal"}, Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: EBSDriver, VolumeHandle: "vol-1"}},
				NodeAffinity:           &corev1.VolumeNodeAffinity{Required: ptr.To(zoneSelector(EBSZoneLabel, "a"))},
			}},
			"pv-intree": {ObjectMeta: metav1.ObjectMeta{Name: "pv-intree"}, Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://us-east-1a/vol-2"}},
			}},
			"pv-local": {ObjectMeta: metav1.ObjectMeta{Name: "pv-local"}, Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt"}},
				NodeAffinity:           &corev1.VolumeNodeAffinity{Required: ptr.To(zoneSelector(corev1.LabelHostname, "node-1"))},
			}},
		},
		classes: map[string]*storagev1.StorageClass{
			"wffc":      class("wffc", storagev1.VolumeBindingWaitForFirstConsumer, "b", "c"),
			"immediate": class("immediate", storagev1.VolumeBindingImmediate),
		},
		defaultClass: class("default", storagev1.VolumeBindingWaitForFirstConsumer),
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want Needs
		wait string
	}{
		{name: "no claims", pod: podWith(corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})},
		{name: "a bound zonal volume, its alias read as the zone", pod: podWith(claimVolume("zonal")), want: Needs{
			Selectors: []corev1.NodeSelector{zoneSelector(corev1.LabelTopologyZone, "a")}, Attachments: []Attachment{{EBSDriver, "vol-1"}}}},
		{name: "an in-tree EBS volume counts as the CSI driver's", pod: podWith(claimVolume("intree")), want: Needs{
			Attachments: []Attachment{{EBSDriver, "vol-2"}}}},
		{name: "a local volume: its node, no attachment", pod: podWith(claimVolume("local")), want: Needs{
			Selectors: []corev1.NodeSelector{zoneSelector(corev1.LabelHostname, "node-1")}}},
		{name: "an unbound WaitForFirstConsumer claim: its class's topologies and provisioner", pod: podWith(claimVolume("wffc")), want: Needs{
			Selectors: []corev1.NodeSelector{zoneSelector(corev1.LabelTopologyZone, "b", "c")}, Attachments: []Attachment{{EBSDriver, "ns/wffc"}}}},
		{name: "an ephemeral volume not created yet: its template's class", pod: podWith(ephemeralVolume("scratch", ptr.To("wffc"))), want: Needs{
			Selectors: []corev1.NodeSelector{zoneSelector(corev1.LabelTopologyZone, "b", "c")}, Attachments: []Attachment{{EBSDriver, "ns/pod-scratch"}}}},
		{name: "an ephemeral volume of no class: the default class", pod: podWith(ephemeralVolume("scratch", nil)), want: Needs{
			Attachments: []Attachment{{EBSDriver, "ns/pod-scratch"}}}},
		{name: "an ephemeral volume whose claim is another's", pod: podWith(ephemeralVolume("other", ptr.To("wffc"))), wait: "was not created for pod"},
		{name: "an Immediate claim not bound", pod: podWith(claimVolume("immediate")), wait: "binds at once"},
		{name: "a claim of no class", pod: podWith(claimVolume("noclass")), wait: "has no StorageClass"},
		{name: "a claim of a missing class", pod: podWith(claimVolume("unknown")), wait: "StorageClass unknown does not exist"},
		{name: "a missing claim", pod: podWith(claimVolume("missing")), wait: "does not exist"},
		{name: "a claim being deleted", pod: podWith(claimVolume("deleting")), wait: "is being deleted"},
		{name: "a claim that lost its volume", pod: podWith(claimVolume("lost")), wait: "lost its PersistentVolume"},
		{name: "a claim bound to a missing volume", pod: podWith(claimVolume("dangling")), wait: "pv-missing, which does not exist"},
		{name: "every volume counts", pod: podWith(claimVolume("zonal"), claimVolume("wffc")), want: Needs{
			Selectors:   []corev1.NodeSelector{zoneSelector(corev1.LabelTopologyZone, "a"), zoneSelector(corev1.LabelTopologyZone, "b", "c")},
			Attachments: []Attachment{{EBSDriver, "vol-1"}, {EBSDriver, "ns/wffc"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := For(tc.pod, store)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wait != "" {
				if !strings.Contains(got.Wait, tc.wait) {
					t.Fatalf("want a wait saying %q, got %+v", tc.wait, got)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	csiNode := &storagev1.CSINode{Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: EBSDriver, Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](25)}},
		{Name: "efs.csi.aws.com"},
	}}}
	if got := Limits(csiNode); !reflect.DeepEqual(got, map[string]int64{EBSDriver: 25}) {
		t.Fatalf("got %v: a driver without a count is unlimited, one with a count limited", got)
	}
	if Limits(nil) != nil {
		t.Fatal("no CSINode: no limit")
	}
}
