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

	caCertPEM, caKeyPEM := read(CAFile), read(caKeyFile)
	caCert, caKey, err := parsePair(caCertPEM, caKeyPEM)
	if err != nil || !caCert.IsCA || now.After(caCert.NotAfter.Add(-24*time.Hour)) {
		if caCertPEM != nil && err != nil {
			return nil, fmt.Errorf("loading the cloud's CA from %s: %w (remove %s and %s to create a new one)", dir, err, CAFile, caKeyFile)
		}
		caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber:          serial(),
			Subject:               pkix.Name{CommonName: "mpool simulated cloud CA", Organization: []string{"mpool"}},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		if caCert, err = x509.ParseCertificate(der); err != nil {
			return nil, err
		}
		caCertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		keyDER, err := x509.MarshalECPrivateKey(caKey)
		if err != nil {
			return nil, err
		}
		if err := write(caKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})); err != nil {
			return nil, err
		}
		if err := write(CAFile, caCertPEM); err != nil {
			return nil, err
		}
	}

	srvPEM, srvKeyPEM := read(tlsFile), read(tlsKeyFile)
	srv, _, err := parsePair(srvPEM, srvKeyPEM)
	if err != nil || srv.CheckSignatureFrom(caCert) != nil || now.After(srv.NotAfter.Add(-24*time.Hour)) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: "localhost", Organization: []string{"mpool"}},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(2 * 365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		srvPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		srvKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
		if err := write(tlsKeyFile, srvKeyPEM); err != nil {
			return nil, err
		}
		if err := write(tlsFile, srvPEM); err != nil {
			return nil, err
		}
	}
	pair, err := tls.X509KeyPair(srvPEM, srvKeyPEM)
	if err != nil {
		return nil, err
	}
	out := &cloudCerts{caPEM: caCertPEM, serving: pair}
	if dir != "" {
		out.caFile = filepath.Join(dir, CAFile)
	}
	return out, nil
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
