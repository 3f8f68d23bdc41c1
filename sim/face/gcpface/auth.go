package gcpface

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/gcpapi"
)

// GCPKey is a service account key the face accepts: its account, its ID
// and its public key (PEM).
type GCPKey struct {
	Email     string `json:"email"`
	KeyID     string `json:"keyID"`
	PublicKey string `json:"publicKey"`
}

// faceData is the GCP face's own persisted data (Cloud.FaceData).
type faceData struct {
	// Keys are the service account keys besides the default one.
	Keys []GCPKey `json:"keys,omitempty"`
	// DefaultKeyDeleted is set once GCPDeleteKey removed the default key.
	DefaultKeyDeleted bool `json:"defaultKeyDeleted,omitempty"`
	// TokenKey signs access tokens (hex), so they stay valid across
	// restarts.
	TokenKey string `json:"tokenKey,omitempty"`
	// Templates are the instance templates by "<project>/<name>", as
	// stored (the client's body with the server's fields).
	Templates map[string]json.RawMessage `json:"templates,omitempty"`
	// Seq numbers resources (templates, groups).
	Seq uint64 `json:"seq,omitempty"`
}

// readData is the face's data of c, shared with every other reader until
// it changes (core.FaceDataAs): read it, never change it; changes go
// through updateData.
func readData(c *core.Cloud) faceData { return core.FaceDataAs[faceData](c, GCPFaceName) }

func updateData(c *core.Cloud, fn func(*faceData) error) (faceData, error) {
	return core.UpdateFaceDataAs(c, GCPFaceName, fn)
}

var (
	defaultKeyOnce sync.Once
	defaultKey     *rsa.PrivateKey
)

// defaultRSAKey is the default service account's key: derived from a fixed
// seed, so that every simulated cloud and every client agree on it without
// sharing state (it is a simulator's published credential, as the other
// faces' default secrets).
func defaultRSAKey() *rsa.PrivateKey {
	defaultKeyOnce.Do(func() {
		rng := mrand.NewChaCha8([32]byte([]byte("mpool simulated gcp default key!")))
		prime := func() *big.Int {
			b := make([]byte, 128)
			for {
				_, _ = rng.Read(b)
				b[0] |= 0xc0
				b[len(b)-1] |= 1
				p := new(big.Int).SetBytes(b)
				for range 10000 {
					if p.ProbablyPrime(20) && new(big.Int).GCD(nil, nil, big.NewInt(65537), new(big.Int).Sub(p, big.NewInt(1))).Int64() == 1 {
						return p
					}
					p.Add(p, big.NewInt(2))
				}
			}
		}
		p, q := prime(), prime()
		n := new(big.Int).Mul(p, q)
		phi := new(big.Int).Mul(new(big.Int).Sub(p, big.NewInt(1)), new(big.Int).Sub(q, big.NewInt(1)))
		d := new(big.Int).ModInverse(big.NewInt(65537), phi)
		k := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: 65537}, D: d, Primes: []*big.Int{p, q}}
		k.Precompute()
		defaultKey = k
	})
	return defaultKey
}

// defaultKeyPEM is the default key in PKCS #8 PEM, as key files hold it.
func defaultKeyPEM() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(defaultRSAKey())
	if err != nil {
		panic(err) // an RSA key always encodes
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// GCPDefaultKey returns the default service account's key file for a face
// served at baseURL (its token URI is baseURL + "/token").
func GCPDefaultKey(baseURL string) []byte {
	return keyFile(GCPDefaultProject, GCPDefaultServiceAccount, GCPDefaultKeyID, defaultKeyPEM(), baseURL)
}

func keyFile(project, email, keyID string, private []byte, baseURL string) []byte {
	b, _ := json.MarshalIndent(gcpapi.ServiceAccountKey{
		Type: "service_account", ProjectID: project, PrivateKeyID: keyID, PrivateKey: string(private),
		ClientEmail: email, ClientID: "1" + keyID[:20], AuthURI: "https://accounts.google.com/o/oauth2/auth",
		TokenURI: strings.TrimSuffix(baseURL, "/") + "/token", UniverseDomain: "googleapis.com",
	}, "", "  ")
	return b
}

// GCPCreateKey creates a key for the service account email of project and
// returns its key file for a face served at baseURL.
func GCPCreateKey(c *core.Cloud, project, email, baseURL string) ([]byte, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 20)
	_, _ = rand.Read(id)
	key := GCPKey{Email: email, KeyID: hex.EncodeToString(id), PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))}
	if _, err := updateData(c, func(d *faceData) error {
		d.Keys = append(d.Keys, key)
		return nil
	}); err != nil {
		return nil, err
	}
	return keyFile(project, email, key.KeyID, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), baseURL), nil
}

// GCPDeleteKey deletes the key keyID (GCPDefaultKeyID: the default key):
// assertions signed with it are refused from then on.
func GCPDeleteKey(c *core.Cloud, keyID string) error {
	_, err := updateData(c, func(d *faceData) error {
		if keyID == GCPDefaultKeyID {
			d.DefaultKeyDeleted = true
			return nil
		}
		d.Keys = slices.DeleteFunc(d.Keys, func(k GCPKey) bool { return k.KeyID == keyID })
		return nil
	})
	return err
}

// keysOf returns the public keys of email the face accepts, by key ID.
func (h *gcpHandler) keysOf(email string) map[string]*rsa.PublicKey {
	d := readData(h.env.Cloud)
	out := map[string]*rsa.PublicKey{}
	if email == GCPDefaultServiceAccount && !d.DefaultKeyDeleted {
		out[GCPDefaultKeyID] = &defaultRSAKey().PublicKey
	}
	for _, k := range d.Keys {
		if k.Email != email {
			continue
		}
		if b, _ := pem.Decode([]byte(k.PublicKey)); b != nil {
			if pub, err := x509.ParsePKIXPublicKey(b.Bytes); err == nil {
				if rk, ok := pub.(*rsa.PublicKey); ok {
					out[k.KeyID] = rk
				}
			}
		}
	}
	return out
}

// tokenKey returns the face's token signing key, creating it on first use.
func (h *gcpHandler) tokenKey() ([]byte, error) {
	return core.FaceKey(func() faceData { return readData(h.env.Cloud) },
		func(fn func(*faceData) error) (faceData, error) { return updateData(h.env.Cloud, fn) },
		func(d *faceData) *string { return &d.TokenKey })
}

var b64 = base64.RawURLEncoding

// assertion is the part of a JWT bearer grant's assertion the face reads.
type assertion struct {
	Iss   string `json:"iss"`
	Sub   string `json:"sub,omitempty"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
}

// gcpTokenPrefix begins the face's access tokens (core.SignToken), as
// "ya29." begins Google's.
const gcpTokenPrefix = "ya29.mpool."

// accessClaims are the claims of the face's access tokens.
type accessClaims struct {
	Email string `json:"email"`
	Scope string `json:"scope"`
	Exp   int64  `json:"exp"`
}

func writeTokenError(w http.ResponseWriter, status int, code, desc string) {
	admin.WriteJSON(w, status, gcpapi.TokenError{Error: code, ErrorDescription: desc})
}

// token serves POST /token: the JWT bearer grant of a service account key.
func (h *gcpHandler) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		writeTokenError(w, http.StatusBadRequest, "invalid_request", "The request body must be a form.")
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		writeTokenError(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("Invalid grant_type: %s", g))
		return
	}
	a, err := h.verifyAssertion(r.PostForm.Get("assertion"), h.baseURL(r)+"/token")
	if err != nil {
		writeTokenError(w, http.StatusBadRequest, "invalid_grant", err.Error())
		return
	}
	key, err := h.tokenKey()
	if err != nil {
		writeTokenError(w, http.StatusInternalServerError, "internal_failure", err.Error())
		return
	}
	life := h.face.tokenLifetime()
	tok := core.SignToken(key, gcpTokenPrefix, accessClaims{Email: a.Iss, Scope: a.Scope, Exp: h.env.Cloud.Clock().Now().Add(life).Unix()})
	admin.WriteJSON(w, http.StatusOK, gcpapi.TokenResponse{AccessToken: tok, ExpiresIn: int(life / time.Second), TokenType: "Bearer"})
}

// verifyAssertion checks a JWT bearer assertion: RS256, signed by a key of
// its issuer the face knows, for audience tokenURI, not expired, for at
// most an hour. Its errors are Google's error descriptions.
func (h *gcpHandler) verifyAssertion(tok, tokenURI string) (assertion, error) {
	var a assertion
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return a, errors.New("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
	}
	var head struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	hb, err1 := b64.DecodeString(parts[0])
	cb, err2 := b64.DecodeString(parts[1])
	sig, err3 := b64.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil || json.Unmarshal(hb, &head) != nil || json.Unmarshal(cb, &a) != nil {
		return a, errors.New("Invalid JWT: the assertion is malformed.")
	}
	if head.Alg != "RS256" {
		return a, fmt.Errorf("Invalid JWT: unsupported signing algorithm %q (RS256 only).", head.Alg)
	}
	keys := h.keysOf(a.Iss)
	if len(keys) == 0 {
		return a, errors.New("Invalid grant: account not found")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	ok := false
	for id, k := range keys {
		if head.Kid != "" && id != head.Kid {
			continue
		}
		if rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) == nil {
			ok = true
			break
		}
	}
	if !ok {
		return a, errors.New("Invalid JWT Signature.")
	}
	now := h.env.Cloud.Clock().Now().Unix()
	switch {
	case a.Aud != tokenURI && !strings.HasSuffix(a.Aud, "/token"):
		return a, fmt.Errorf("Invalid JWT: audience %q is not the token URI.", a.Aud)
	case a.Exp <= now-30 || a.Iat > now+300 || a.Exp-a.Iat > 3600:
		return a, errors.New("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
	case a.Scope == "":
		return a, errors.New("Invalid OAuth scope or ID token audience provided.")
	}
	return a, nil
}

// authorize checks a compute request's bearer token, answering 401
// authError when it is missing, not the face's or expired, and 403 when
// its scopes do not reach Compute Engine.
func (h *gcpHandler) authorize(w http.ResponseWriter, r *http.Request) bool {
	fail := func(msg string) bool {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, gcpapi.ReasonAuthError, "global", msg)
		return false
	}
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return fail("Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
	}
	key, err := h.tokenKey()
	if err != nil {
		writeError(w, http.StatusInternalServerError, gcpapi.ReasonBackendError, "", err.Error())
		return false
	}
	var c accessClaims
	if !core.VerifyToken(key, gcpTokenPrefix, tok, &c) {
		return fail("Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
	}
	if h.env.Cloud.Clock().Now().Unix() >= c.Exp {
		return fail("Request had invalid authentication credentials: the access token expired.")
	}
	for _, s := range strings.Fields(c.Scope) {
		if s == "https://www.googleapis.com/auth/cloud-platform" || s == "https://www.googleapis.com/auth/compute" ||
			(s == "https://www.googleapis.com/auth/compute.readonly" && r.Method == http.MethodGet) {
			return true
		}
	}
	writeError(w, http.StatusForbidden, "insufficientPermissions", "global", "Request had insufficient authentication scopes.")
	return false
}
