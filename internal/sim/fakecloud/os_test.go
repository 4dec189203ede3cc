package fakecloud

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Every fake offering is linux: a pool's kubernetes.io/os In [linux] requirement matches
// each of them, and In [windows] none, so that a windows pool finds no instance type.
func TestFakeOfferingsAreLinux(t *testing.T) {
	os := func(values ...string) []corev1.NodeSelectorRequirement {
		return []corev1.NodeSelectorRequirement{{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: values}}
	}
	for _, it := range DefaultCatalog() {
		for _, o := range it.Offerings {
			if ok, err := cloudprovider.Satisfies(it, o, os("linux")); err != nil || !ok {
				t.Errorf("%s in %s (%s) does not meet kubernetes.io/os In [linux] (%v)", it.Name, o.Zone, o.CapacityType, err)
			}
			if ok, err := cloudprovider.Satisfies(it, o, os("windows")); err != nil || ok {
				t.Errorf("%s in %s (%s) meets kubernetes.io/os In [windows] (%v)", it.Name, o.Zone, o.CapacityType, err)
			}
		}
	}
	if _, _, ok, err := cloudprovider.CheapestOffering(DefaultCatalog(), os("windows")); err != nil || ok {
		t.Fatalf("CheapestOffering found an offering for windows (%v)", err)
	}
}
