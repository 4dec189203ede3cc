package aws

import (
	"fmt"
	"strings"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The family of a node class's images decides how its nodes join the cluster (the form
// of their user data), which device holds the kubelet's files and which volumes the
// image brings. An alias names its family; spec.amiFamily names it for images selected
// by ID, name or tags, as Karpenter's EC2NodeClass does.

// familyOfAMIFamily is the resolved family (status.amis[].family) of a spec.amiFamily;
// unset is custom.
func familyOfAMIFamily(amiFamily string) (string, error) {
	switch amiFamily {
	case v1beta1.AMIFamilyAL2023:
		return FamilyAL2023, nil
	case v1beta1.AMIFamilyBottlerocket:
		return FamilyBottlerocket, nil
	case v1beta1.AMIFamilyCustom, "":
		return FamilyCustom, nil
	}
	return "", fmt.Errorf("spec.amiFamily %q is none of %s, %s and %s", amiFamily,
		v1beta1.AMIFamilyAL2023, v1beta1.AMIFamilyBottlerocket, v1beta1.AMIFamilyCustom)
}

// aliasFamily is the family of the images an alias publishes, checked against
// spec.amiFamily: unset follows the alias; set, it must name the alias's family. The
// API refuses a disagreement; this says so again for an object written before the rule.
func aliasFamily(alias, amiFamily string) (string, error) {
	family, _, _ := strings.Cut(alias, "@")
	if amiFamily == "" {
		return family, nil
	}
	declared, err := familyOfAMIFamily(amiFamily)
	if err != nil {
		return "", err
	}
	if declared != family {
		return "", fmt.Errorf("spec.amiFamily %s disagrees with alias %s; set it to the alias's family or leave it unset", amiFamily, alias)
	}
	return family, nil
}

// userDataForm is how a node's user data is written.
type userDataForm int

const (
	// formNodeadm: a MIME document, spec.userData's parts then nodeadm's NodeConfig.
	formNodeadm userDataForm = iota
	// formBottlerocket: settings TOML, Stratos's keys written over spec.userData's.
	formBottlerocket
	// formAsIs: spec.userData alone, unchanged; the image joins the cluster itself.
	formAsIs
)

// userDataFormOf is the form of the user data of class's nodes, from the family its
// images resolved to: Bottlerocket's settings, or nodeadm's NodeConfig for AL2023. A
// custom image gets spec.userData as it is when spec.amiFamily says Custom; unset, it
// gets nodeadm's NodeConfig as it did before amiFamily existed, so that a class written
// then still joins its nodes.
func userDataFormOf(class *v1beta1.EC2NodeClass) userDataForm {
	family := ""
	if len(class.Status.AMIs) > 0 {
		family = class.Status.AMIs[0].Family
	}
	switch {
	case family == FamilyBottlerocket:
		return formBottlerocket
	case family == FamilyCustom && class.Spec.AMIFamily == v1beta1.AMIFamilyCustom:
		return formAsIs
	}
	return formNodeadm
}
