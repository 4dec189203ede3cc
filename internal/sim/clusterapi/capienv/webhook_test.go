package capienv

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"path/filepath"
	"testing"
)

// The serving certificate NewWebhook writes is one the API server, trusting only the
// CA bundle, accepts for the loopback names it calls the manager by.
func TestNewWebhookWritesAServingCertificateTheCABundleVerifies(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWebhook(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Port == 0 || w.CertDir != dir {
		t.Fatalf("webhook %+v, want a port and cert dir %s", w, dir)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(w.CABundle) {
		t.Fatal("the CA bundle holds no certificate")
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("the serving certificate does not verify for %s against the CA bundle: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: x509.NewCertPool(), DNSName: "127.0.0.1"}); err == nil {
		t.Error("the serving certificate verifies without the CA bundle: it should need it")
	}
	if got, want := w.url("/convert"), fmt.Sprintf("https://127.0.0.1:%d/convert", w.Port); got != want {
		t.Errorf("the webhook's URL is %s, want %s", got, want)
	}
}
