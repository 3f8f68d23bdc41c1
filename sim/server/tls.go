package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files of the cloud's certificate authority in the data directory.
const (
	// CAFile is the PEM certificate of the cloud's CA, which signs the
	// serving certificate of its HTTPS listeners: what clients trust.
	CAFile     = "ca.crt"
	caKeyFile  = "ca.key"
	tlsFile    = "tls.crt"
	tlsKeyFile = "tls.key"
)

// cloudCerts are the cloud's CA and the serving certificate of its HTTPS
// listeners (127.0.0.1, ::1, localhost).
type cloudCerts struct {
	caPEM   []byte
	caFile  string
	serving tls.Certificate
}

// loadOrCreateCerts loads the CA and serving certificate from dir, creating
// (and persisting) whatever is missing, expired or not signed by the CA. With
// dir empty they live in memory only.
func loadOrCreateCerts(dir string, now time.Time) (*cloudCerts, error) {
	read := func(name string) []byte {
		if dir == "" {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		return b
	}
	write := func(name string, b []byte) error {
		if dir == "" {
			return nil
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		tmp := filepath.Join(dir, name+".tmp")
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(dir, name))
	}

	// save writes a pair's key, then its certificate.
	save := func(p *keyPair, certName, keyName string) error {
		if err := write(keyName, p.keyPEM); err != nil {
			return err
		}
		return write(certName, p.certPEM)
	}

	ca := &keyPair{certPEM: read(CAFile), keyPEM: read(caKeyFile)}
	var err error
	ca.cert, ca.key, err = parsePair(ca.certPEM, ca.keyPEM)
	if err != nil || !ca.cert.IsCA || now.After(ca.cert.NotAfter.Add(-24*time.Hour)) {
		if ca.certPEM != nil && err != nil {
			return nil, fmt.Errorf("loading the cloud's CA from %s: %w (remove %s and %s to create a new one)", dir, err, CAFile, caKeyFile)
		}
		if ca, err = issue(&x509.Certificate{
			SerialNumber:          serial(),
			Subject:               pkix.Name{CommonName: "mpool simulated cloud CA", Organization: []string{"mpool"}},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}, nil); err != nil {
			return nil, err
		}
		if err := save(ca, CAFile, caKeyFile); err != nil {
			return nil, err
		}
	}

	srv := &keyPair{certPEM: read(tlsFile), keyPEM: read(tlsKeyFile)}
	srv.cert, srv.key, err = parsePair(srv.certPEM, srv.keyPEM)
	if err != nil || srv.cert.CheckSignatureFrom(ca.cert) != nil || now.After(srv.cert.NotAfter.Add(-24*time.Hour)) {
		if srv, err = issue(&x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: "localhost", Organization: []string{"mpool"}},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(2 * 365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}, ca); err != nil {
			return nil, err
		}
		if err := save(srv, tlsFile, tlsKeyFile); err != nil {
			return nil, err
		}
	}
	pair, err := tls.X509KeyPair(srv.certPEM, srv.keyPEM)
	if err != nil {
		return nil, err
	}
	out := &cloudCerts{caPEM: ca.certPEM, serving: pair}
	if dir != "" {
		out.caFile = filepath.Join(dir, CAFile)
	}
	return out, nil
}

// keyPair is a certificate and its EC private key, parsed and as PEM.
type keyPair struct {
	cert            *x509.Certificate
	key             *ecdsa.PrivateKey
	certPEM, keyPEM []byte
}

// issue creates a key and a certificate of tmpl for it, signed by parent
// (self-signed when parent is nil).
func issue(tmpl *x509.Certificate, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}, nil
}

// parsePair parses a PEM certificate and its EC private key.
func parsePair(certPEM, keyPEM []byte) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	if certPEM == nil || keyPEM == nil {
		return nil, nil, fs.ErrNotExist
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) {
		return nil, nil, errors.New("the key does not match the certificate")
	}
	return cert, key, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// CertPool returns a pool holding the PEM certificates in caPEM, e.g.
// Server.CA(), for clients of the cloud's HTTPS listeners.
func CertPool(caPEM []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bytes.TrimSpace(caPEM)) {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}
