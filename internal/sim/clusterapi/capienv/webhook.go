package capienv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"

	"github.com/stratos-sh/stratos/internal/sim/process"
)

// Webhook is where Cluster API's manager serves its admission and conversion webhooks
// on loopback, and the certificates it serves them with. Install points the API server
// at it; Start runs the manager on it. One Webhook outlives a restart of the manager.
type Webhook struct {
	// Port is the manager's webhook port on 127.0.0.1.
	Port int
	// CertDir holds tls.crt (the serving certificate, then its CA) and tls.key, the
	// names the manager's --webhook-cert-dir expects.
	CertDir string
	// CABundle is the CA the API server trusts when it calls the webhooks.
	CABundle []byte
}

// NewWebhook picks a free loopback port and writes a CA and a serving certificate for
// 127.0.0.1 and localhost, signed by it, to certDir.
func NewWebhook(certDir string) (*Webhook, error) {
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("generating the webhook's certificates: %w", err)
	}
	// The generated chain is the serving certificate followed by the CA that signed it;
	// the API server must trust the CA, not the leaf.
	chain, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	var caBundle []byte
	for _, c := range chain {
		if c.IsCA {
			if caBundle, err = certutil.EncodeCertificates(c); err != nil {
				return nil, err
			}
		}
	}
	if caBundle == nil {
		return nil, errors.New("the generated certificate chain has no CA")
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.key"), keyPEM, 0o600); err != nil {
		return nil, err
	}
	return &Webhook{Port: port, CertDir: certDir, CABundle: caBundle}, nil
}

// url is the address at which the API server calls the webhook served at path.
func (w *Webhook) url(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", w.Port, path)
}
