package bootstrap

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
)

// CACertHashes returns kubeadm's public key pin ("sha256:<hex of the
// certificate's DER SubjectPublicKeyInfo>") of every certificate in caPEM, in
// order. A CA bundle yields one pin per certificate.
func CACertHashes(caPEM []byte) ([]string, error) {
	var hashes []string
	rest := caPEM
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing CA certificate %d: %w", len(hashes)+1, err)
		}
		sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
		hashes = append(hashes, "sha256:"+hex.EncodeToString(sum[:]))
	}
	if len(hashes) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block found in the CA data")
	}
	return hashes, nil
}

// CACertHash returns kubeadm's public key pin of the first certificate in
// caPEM: "sha256:" followed by the hex SHA-256 of its SubjectPublicKeyInfo.
func CACertHash(caPEM []byte) (string, error) {
	hashes, err := CACertHashes(caPEM)
	if err != nil {
		return "", err
	}
	return hashes[0], nil
}
