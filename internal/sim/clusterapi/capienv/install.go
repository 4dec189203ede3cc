// Package capienv runs Cluster API's core controller manager (bin/capi-manager, built by
// hack/tools.sh at the pinned release) against an API server, for the integration tests
// and the simulator: Install puts CAPI's CRDs and webhook configurations in the API
// server, pointed at a manager on loopback that serves them with certificates of our
// own (as CAPI's own envtest set-up does); Start runs the manager.
package capienv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// conversionPath is where controller-runtime, and so CAPI's manager, serves CRD
// conversion.
const conversionPath = "/convert"

// installScheme holds the kinds CAPI's configuration directory contains.
var installScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := admissionregistrationv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// Install creates or updates, in the API server cfg reaches, CAPI's CRDs from
// configDir/crd/*.yaml and its webhook configurations from
// configDir/webhook/manifests.yaml, all calling webhook; it returns when the API server
// serves every CRD. configDir is what hack/tools.sh links as bin/capi-config.
func Install(ctx context.Context, cfg *rest.Config, configDir string, webhook *Webhook) error {
	c, err := client.New(cfg, client.Options{Scheme: installScheme})
	if err != nil {
		return err
	}
	crdFiles, err := filepath.Glob(filepath.Join(configDir, "crd", "*.yaml"))
	if err != nil {
		return err
	}
	if len(crdFiles) == 0 {
		return fmt.Errorf("no CRDs in %s: build them with hack/tools.sh capi-manager", filepath.Join(configDir, "crd"))
	}
	objects, err := readObjects(append(crdFiles, filepath.Join(configDir, "webhook", "manifests.yaml"))...)
	if err != nil {
		return err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, obj := range objects {
		switch obj := obj.(type) {
		case *apiextensionsv1.CustomResourceDefinition:
			convertThrough(obj, webhook)
			crds = append(crds, obj)
			err = apply(ctx, c, obj, func(existing *apiextensionsv1.CustomResourceDefinition) { existing.Spec = obj.Spec })
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			obj.Name = "capi-" + obj.Name
			for i := range obj.Webhooks {
				callThrough(&obj.Webhooks[i].ClientConfig, webhook)
			}
			err = apply(ctx, c, obj, func(existing *admissionregistrationv1.MutatingWebhookConfiguration) { existing.Webhooks = obj.Webhooks })
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			obj.Name = "capi-" + obj.Name
			for i := range obj.Webhooks {
				callThrough(&obj.Webhooks[i].ClientConfig, webhook)
			}
			err = apply(ctx, c, obj, func(existing *admissionregistrationv1.ValidatingWebhookConfiguration) {
				existing.Webhooks = obj.Webhooks
			})
		default:
			err = fmt.Errorf("unexpected %T in CAPI's configuration", obj)
		}
		if err != nil {
			return err
		}
	}
	// Served, not only Established: a client whose RESTMapper asks between the two finds
	// no such kind.
	return envtest.WaitForCRDs(cfg, crds, envtest.CRDInstallOptions{MaxTime: time.Minute, PollInterval: 100 * time.Millisecond})
}

// convertThrough makes a CRD that serves several versions convert through the webhook,
// as CAPI's kustomize patches do in a real installation; the CRDs in the release's
// bases have no conversion stanza.
func convertThrough(crd *apiextensionsv1.CustomResourceDefinition, webhook *Webhook) {
	served := 0
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served++
		}
	}
	if served < 2 {
		return
	}
	url := webhook.url(conversionPath)
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: webhook.CABundle},
			ConversionReviewVersions: []string{"v1"},
		},
	}
}

// callThrough turns an in-cluster Service reference, which the release's manifests
// carry, into the loopback URL of the manager.
func callThrough(cc *admissionregistrationv1.WebhookClientConfig, webhook *Webhook) {
	path := ""
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	url := webhook.url(path)
	cc.Service, cc.URL, cc.CABundle = nil, &url, webhook.CABundle
}

// apply creates obj, or updates the existing object with what update copies from obj.
func apply[T client.Object](ctx context.Context, c client.Client, obj T, update func(existing T)) error {
	existing := obj.DeepCopyObject().(T)
	_, err := controllerutil.CreateOrUpdate(ctx, c, existing, func() error {
		update(existing)
		return nil
	})
	if err != nil {
		return fmt.Errorf("installing %s: %w", obj.GetName(), err)
	}
	return nil
}

// readObjects decodes every YAML document of the files into the kinds of installScheme.
func readObjects(files ...string) ([]runtime.Object, error) {
	decoder := serializer.NewCodecFactory(installScheme).UniversalDeserializer()
	var objects []runtime.Object
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := docs.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", file, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "---" {
				continue
			}
			obj, _, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("decoding %s: %w", file, err)
			}
			objects = append(objects, obj)
		}
	}
	return objects, nil
}
