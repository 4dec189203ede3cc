package harness

import (
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// InstallCRDs creates the CRDs, or updates those that exist, and waits until the API
// server's discovery serves every version of them. Established is not enough:
// discovery follows it a moment later, and a client whose RESTMapper asks in between
// finds no such kind (seen in test/integration/migrate).
func InstallCRDs(cfg *rest.Config, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		CRDs:         crds,
		MaxTime:      time.Minute,
		PollInterval: 50 * time.Millisecond,
	})
	return err
}
