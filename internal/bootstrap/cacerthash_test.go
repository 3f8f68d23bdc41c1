package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// caPinFromOpenSSL is the pin of testdata/ca.crt as kubeadm's documentation
// computes it:
//
//	openssl x509 -pubkey -in ca.crt | openssl pkey -pubin -outform der | sha256sum
const caPinFromOpenSSL = "sha256:fbc192be93ffb38be721290d22c18aea76d40d45a21542ec5cea343f5573fd45"

func TestCACertHashKnownVector(t *testing.T) {
	pemData, err := os.ReadFile(filepath.Join("testdata", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := CACertHash(pemData)
	if err != nil {
		t.Fatal(err)
	}
	if got != caPinFromOpenSSL {
		t.Errorf("CACertHash = %s, want %s", got, caPinFromOpenSSL)
	}
}

func newCA(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Unix(0, 0),
		NotAfter:              time.Unix(0, 0).Add(100 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// pinOf computes the pin from the public key itself, independently of the
// certificate's raw SubjectPublicKeyInfo bytes.
func pinOf(t *testing.T, pemData []byte) string {
	t.Helper()
	block, _ := pem.Decode(pemData)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(cert.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spki)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestCACertHashes(t *testing.T) {
	a, b := newCA(t, "a"), newCA(t, "b")
	key := []byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n")
	tests := []struct {
		name    string
		why     string
		pem     []byte
		want    []string
		wantErr bool
	}{
		{name: "one certificate", why: "the usual <cluster>-ca tls.crt", pem: a, want: []string{pinOf(t, a)}},
		{name: "bundle", why: "a CA rotation bundle pins every certificate", pem: append(append([]byte{}, a...), b...), want: []string{pinOf(t, a), pinOf(t, b)}},
		{name: "other blocks skipped", why: "a key block next to the certificate is not a certificate", pem: append(append([]byte{}, key...), a...), want: []string{pinOf(t, a)}},
		{name: "empty", why: "no certificate is an error, not an empty pin list", pem: nil, wantErr: true},
		{name: "garbage", why: "a corrupt certificate is reported", pem: []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CACertHashes(tt.pem)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CACertHashes = %v, want %v", got, tt.want)
			}
		})
	}
}
