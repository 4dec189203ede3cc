package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// clusterAPINodeClasses is what a scenario's fake node classes become on clusterapi:
// ClusterAPINodeClasses of the simulator's CAPI cluster, whose Machines are made from
// the simulator's SimMachine and SimConfig templates and whose instance types are those
// of the fake cloud's catalogue the class allows, as the simulator's infrastructure
// provider launches them there.
type clusterAPINodeClasses struct {
	cluster v1beta1.ClusterAPIClusterReference
	// bootstrap and infrastructure are the templates every class names.
	bootstrap, infrastructure v1beta1.ClusterAPITemplateReference
	// version is the Kubernetes version of the Machines: the control plane's.
	version string
	// catalog is the fake cloud's, whose on-demand offerings the classes state: CAPI has
	// no spot, and Stratos launches on demand on clusterapi.
	catalog []*cloudprovider.InstanceType
}

// translate rewrites a scenario written for the fake cloud to run on clusterapi, in
// place: each FakeNodeClass becomes a ClusterAPINodeClass of the same name, and each
// NodePool that refers to one refers to the ClusterAPINodeClass instead. The objects
// applied before the first step and those of apply steps are translated alike.
// scenario.Validate has refused what a ClusterAPINodeClass cannot carry (hibernation, a
// class's physics and faults).
func (c clusterAPINodeClasses) translate(s *scenario.Scenario) error {
	batches := [][]unstructured.Unstructured{s.Objects}
	for _, st := range s.Steps {
		batches = append(batches, st.Apply)
	}
	for _, batch := range batches {
		for i := range batch {
			o := &batch[i]
			var err error
			switch o.GetKind() {
			case "FakeNodeClass":
				err = c.nodeClass(o)
			case "NodePool":
				err = poolOnClusterAPI(o)
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
		}
	}
	return nil
}

// nodeClass replaces a FakeNodeClass with its ClusterAPINodeClass.
func (c clusterAPINodeClasses) nodeClass(o *unstructured.Unstructured) error {
	fakeClass := &v1beta1.FakeNodeClass{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, fakeClass); err != nil {
		return err
	}
	types, err := c.instanceTypes(fakeClass.Spec)
	if err != nil {
		return err
	}
	class := &v1beta1.ClusterAPINodeClass{
		Spec: v1beta1.ClusterAPINodeClassSpec{
			Cluster:                   c.cluster,
			BootstrapTemplateRef:      c.bootstrap,
			InfrastructureTemplateRef: c.infrastructure,
			Version:                   c.version,
			InstanceTypes:             types,
		},
	}
	class.Name, class.Labels, class.Annotations = fakeClass.Name, fakeClass.Labels, fakeClass.Annotations
	class.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("ClusterAPINodeClass"))
	object, err := runtime.DefaultUnstructuredConverter.ToUnstructured(class)
	if err != nil {
		return err
	}
	// The status is the operator's to write; an empty one would only be noise.
	delete(object, "status")
	unstructured.RemoveNestedField(object, "metadata", "creationTimestamp")
	o.Object = object
	return nil
}

// instanceTypes are the catalogue's types a FakeNodeClass allows, each offered on demand
// in the zones the class allows, at the catalogue's prices.
func (c clusterAPINodeClasses) instanceTypes(spec v1beta1.FakeNodeClassSpec) ([]v1beta1.ClusterAPIInstanceType, error) {
	var out []v1beta1.ClusterAPIInstanceType
	for _, t := range c.catalog {
		if len(spec.InstanceTypes) > 0 && !slices.Contains(spec.InstanceTypes, t.Name) {
			continue
		}
		offered := v1beta1.ClusterAPIInstanceType{Name: t.Name, Capacity: t.Capacity.DeepCopy(), Architecture: t.Architecture}
		var price, stopped float64
		for _, o := range t.Offerings {
			if o.CapacityType != v1beta1.CapacityTypeOnDemand || !o.Available || (len(spec.Zones) > 0 && !slices.Contains(spec.Zones, o.Zone)) {
				continue
			}
			if !slices.Contains(offered.Zones, o.Zone) {
				offered.Zones = append(offered.Zones, o.Zone)
			}
			// One price per type: CAPI's types are priced alike in every failure domain.
			price, stopped = max(price, o.PricePerHour), max(stopped, o.StoppedPricePerHour)
		}
		if len(offered.Zones) == 0 {
			continue
		}
		offered.PricePerHour = decimal(price)
		if stopped > 0 {
			offered.StoppedPricePerHour = decimal(stopped)
		}
		out = append(out, offered)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no instance type of the fake catalogue is offered on demand for instance types %v in zones %v", spec.InstanceTypes, spec.Zones)
	}
	return out, nil
}

// decimal writes a price as the class's decimal strings (digits, a point, digits; 16
// characters at most), to a millionth of a cent: the fake's stopped price, a disk's
// monthly price spread over the hours, has more digits than that.
func decimal(price float64) string {
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(price, 'f', 8, 64), "0"), ".")
}

// poolOnClusterAPI points a pool at the ClusterAPINodeClass of its FakeNodeClass; the
// class offers only the types the FakeNodeClass allowed, so no requirement is needed.
func poolOnClusterAPI(o *unstructured.Unstructured) error {
	kind, _, err := unstructured.NestedString(o.Object, "spec", "template", "spec", "nodeClassRef", "kind")
	if err != nil || kind != "FakeNodeClass" {
		return err
	}
	return unstructured.SetNestedField(o.Object, "ClusterAPINodeClass", "spec", "template", "spec", "nodeClassRef", "kind")
}
