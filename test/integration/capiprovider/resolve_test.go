package capiprovider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Resolve accepts a class whose Cluster and templates exist, naming the infrastructure
// kinds it makes and whether Stratos can power them all; it refuses one whose Cluster or
// template is missing with an InvalidParameter error that names it.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	sims, err := provider.Resolve(ctx, classOver(ref(simTemplateKind, simTemplate)))
	if err != nil {
		t.Fatal(err)
	}
	if !sims.Standby || len(sims.InfrastructureKinds) != 1 || sims.InfrastructureKinds[0] != simMachineKind.GroupKind() {
		t.Errorf("SimMachine class: %+v, want standby with kind SimMachine", sims)
	}

	mixed := classOver(ref(simTemplateKind, simTemplate))
	override := ref(machineTemplateKind, machineTemplate)
	mixed.Spec.InstanceTypes[1].InfrastructureTemplateRef = &override
	got, err := provider.Resolve(ctx, mixed)
	if err != nil {
		t.Fatal(err)
	}
	if got.Standby || len(got.InfrastructureKinds) != 2 || got.InfrastructureKinds[1] != (schema.GroupKind{Group: machineKind.Group, Kind: machineKind.Kind}) {
		t.Errorf("class with a type on TestMachines: %+v, want no standby, kinds SimMachine and TestMachine", got)
	}

	noCluster := classOver(ref(simTemplateKind, simTemplate))
	noCluster.Spec.Cluster.Name = "elsewhere"
	missingOverride := classOver(ref(simTemplateKind, simTemplate))
	absent := ref(machineTemplateKind, "absent")
	missingOverride.Spec.InstanceTypes[0].InfrastructureTemplateRef = &absent
	noBootstrap := classOver(ref(simTemplateKind, simTemplate))
	noBootstrap.Spec.BootstrapTemplateRef.Name = "absent"
	for _, tt := range []struct {
		name  string
		class *v1beta1.ClusterAPINodeClass
		says  string
	}{
		{"missing Cluster", noCluster, "Cluster capi/elsewhere does not exist"},
		{"missing type template", missingOverride, "TestMachineTemplate capi/absent does not exist"},
		{"missing bootstrap template", noBootstrap, "TestConfigTemplate capi/absent does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := provider.Resolve(ctx, tt.class)
			if !errors.Is(err, cloudprovider.ErrInvalidParameter) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %v, want InvalidParameter saying %q", err, tt.says)
			}
		})
	}
}
