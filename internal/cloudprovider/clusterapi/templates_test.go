package clusterapi

import (
	"encoding/json"
	"testing"
)

// An object made from a template is the template's kind without Template, at its
// version, with its spec.template.spec, its template labels under the given ones, and
// CAPI's cloned-from annotations.
func TestFromTemplate(t *testing.T) {
	template := objectOf(t, `{"apiVersion":"infrastructure.example.com/v1alpha3","kind":"RackMachineTemplate",
		"metadata":{"namespace":"capi","name":"racks","labels":{"not":"copied"}},
		"spec":{"template":{"metadata":{"labels":{"tier":"metal","stratos.sh/nodepool":"template"},"annotations":{"note":"kept"}},
			"spec":{"image":"ubuntu","disks":[{"size":100}]}}}}`)
	obj, err := fromTemplate(template, "capi", "default-abc", map[string]string{"stratos.sh/nodepool": "default"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(obj.Object)
	want := `{"apiVersion":"infrastructure.example.com/v1alpha3","kind":"RackMachine","metadata":{` +
		`"annotations":{"cluster.x-k8s.io/cloned-from-groupkind":"RackMachineTemplate.infrastructure.example.com","cluster.x-k8s.io/cloned-from-name":"racks","note":"kept"},` +
		`"labels":{"stratos.sh/nodepool":"default","tier":"metal"},"name":"default-abc","namespace":"capi"},` +
		`"spec":{"disks":[{"size":100}],"image":"ubuntu"}}`
	if string(got) != want {
		t.Errorf("made\n%s\nwant\n%s", got, want)
	}
}
