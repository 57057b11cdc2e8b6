package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the paths of the certificates and keys of one local cluster, all under one folder.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

func (p pki) caCert() string         { return p.path("ca.crt") }
func (p pki) servingCert() string    { return p.path("apiserver.crt") }
func (p pki) servingKey() string     { return p.path("apiserver.key") }
func (p pki) adminCert() string      { return p.path("admin.crt") }
func (p pki) adminKey() string       { return p.path("admin.key") }
func (p pki) saPublicKey() string    { return p.path("sa.pub") }
func (p pki) saPrivateKey() string   { return p.path("sa.key") }
func (p pki) webhookCertDir() string { return p.path("webhook") }

// generate writes a CA, a serving certificate for 127.0.0.1 and localhost (used by the API
// server and the training-operator webhook), an admin client certificate in system:masters, and
// the service-account signing key pair.
func (p pki) generate() error {
	if err := os.MkdirAll(p.webhookCertDir(), 0o700); err != nil {
		return err
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "training-local-cluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePEM(p.caCert(), "CERTIFICATE", caDER); err != nil {
		return err
	}

	issue := func(serial int64, subject pkix.Name, usage x509.ExtKeyUsage, certPath, keyPath string, extraPaths ...string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      subject,
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		for _, paths := range append([][2]string{{certPath, keyPath}}, pairs(extraPaths)...) {
			if err := writePEM(paths[0], "CERTIFICATE", der); err != nil {
				return err
			}
			if err := writePEM(paths[1], "EC PRIVATE KEY", keyDER); err != nil {
				return err
			}
		}
		return nil
	}
	if err := issue(2, pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth,
		p.servingCert(), p.servingKey(),
		filepath.Join(p.webhookCertDir(), "tls.crt"), filepath.Join(p.webhookCertDir(), "tls.key")); err != nil {
		return fmt.Errorf("issuing serving certificate: %w", err)
	}
	if err := issue(3, pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}}, x509.ExtKeyUsageClientAuth,
		p.adminCert(), p.adminKey()); err != nil {
		return fmt.Errorf("issuing admin certificate: %w", err)
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.saPrivateKey(), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)); err != nil {
		return err
	}
	return writePEM(p.saPublicKey(), "PUBLIC KEY", pub)
}

func pairs(paths []string) [][2]string {
	var out [][2]string
	for i := 0; i+1 < len(paths); i += 2 {
		out = append(out, [2]string{paths[i], paths[i+1]})
	}
	return out
}

func writePEM(path, blockType string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600)
}
