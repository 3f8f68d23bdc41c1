package awsface

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// AWSKey is an access key of the simulated AWS (IAM user credentials) and
// the account its requests act in.
type AWSKey struct {
	AccessKeyID     string `json:"accessKeyID"`
	SecretAccessKey string `json:"secretAccessKey"`
	// AccountID is the account (default AWSDefaultAccountID): the scope
	// of the key's groups, launch templates and quotas.
	AccountID string `json:"accountID,omitempty"`
}

// awsFaceData is the AWS face's own data (Cloud.UpdateFaceData).
type awsFaceData struct {
	// Initialized is set once the key list was written: before, it holds
	// the default key.
	Initialized bool     `json:"initialized,omitempty"`
	Keys        []AWSKey `json:"keys,omitempty"`
	// Templates and Activities are where a state written before the face
	// kept its launch templates and scaling activities as records
	// (templateKey, activitiesKey) held them: by scope (account/region)
	// and ID or group name. migrateRecords moves them.
	Templates  map[string]map[string]*awsTemplate  `json:"templates,omitempty"`
	Activities map[string]map[string][]awsActivity `json:"activities,omitempty"`
}

// The keys of the face's records (core.Cloud.UpdateFaceRecord): one per
// launch template, one per template name (its ID), one per group's
// scaling activities. Kept one per object, a request reads and changes
// only its own: in the face's data, every request decoded every launch
// template's user data and every group's activities to check its
// signature, and every new activity encoded them all again.
func templateKey(scope, id string) string       { return "lt/" + scope + "/" + id }
func templateNameKey(scope, name string) string { return "ltname/" + scope + "/" + name }
func activitiesKey(scope, group string) string  { return "activities/" + scope + "/" + group }

// migrateRecords moves the launch templates and activities a state of an
// earlier version kept in the face's data to their records.
func migrateRecords(c *core.Cloud) error {
	d := readAWSData(c)
	if len(d.Templates) == 0 && len(d.Activities) == 0 {
		return nil
	}
	for scope, ts := range d.Templates {
		for id, t := range ts {
			if _, err := c.UpdateFaceRecord(AWSFaceName, templateKey(scope, id), core.ReplacePayload(t)); err != nil {
				return err
			}
			if _, err := c.UpdateFaceRecord(AWSFaceName, templateNameKey(scope, t.Name), core.ReplacePayload(id)); err != nil {
				return err
			}
		}
	}
	for scope, gs := range d.Activities {
		for name, list := range gs {
			if _, err := c.UpdateFaceRecord(AWSFaceName, activitiesKey(scope, name), core.ReplacePayload(list)); err != nil {
				return err
			}
		}
	}
	return updateAWSData(c, func(d *awsFaceData) error {
		d.Templates, d.Activities = nil, nil
		return nil
	})
}

func defaultAWSKey() AWSKey {
	return AWSKey{AccessKeyID: AWSDefaultAccessKeyID, SecretAccessKey: AWSDefaultSecretAccessKey, AccountID: AWSDefaultAccountID}
}

// readAWSData is the face's data of c, shared with every other reader
// until it changes (core.FaceDataAs): read it, never change it; changes go
// through updateAWSData.
func readAWSData(c *core.Cloud) *awsFaceData {
	d := core.FaceDataAs[awsFaceData](c, AWSFaceName)
	d.defaults()
	return &d
}

// defaults gives data whose key list was never written the default key.
func (d *awsFaceData) defaults() {
	if !d.Initialized {
		d.Keys = []AWSKey{defaultAWSKey()}
	}
}

// updateAWSData changes the face's data atomically; fn's error leaves it
// unchanged.
func updateAWSData(c *core.Cloud, fn func(*awsFaceData) error) error {
	_, err := c.UpdateFaceData(AWSFaceName, core.EditPayload(func(d *awsFaceData) error {
		d.defaults()
		return fn(d)
	}))
	return err
}

// AWSSetKey registers an access key with the AWS face of c (or replaces the
// one with its ID). The default key stays until removed.
func AWSSetKey(c *core.Cloud, k AWSKey) error {
	if k.AccessKeyID == "" || k.SecretAccessKey == "" {
		return core.Invalidf("an AWS access key needs an access key ID and a secret access key")
	}
	if k.AccountID == "" {
		k.AccountID = AWSDefaultAccountID
	}
	if len(k.AccountID) != 12 || strings.Trim(k.AccountID, "0123456789") != "" {
		return core.Invalidf("an AWS account ID is 12 digits, got %q", k.AccountID)
	}
	return updateAWSData(c, func(d *awsFaceData) error {
		d.Initialized = true
		d.Keys = slices.DeleteFunc(d.Keys, func(o AWSKey) bool { return o.AccessKeyID == k.AccessKeyID })
		d.Keys = append(d.Keys, k)
		return nil
	})
}

// AWSDeleteKey removes an access key from the AWS face of c (the default
// one too); requests signed with it are then refused as an unknown key's.
func AWSDeleteKey(c *core.Cloud, accessKeyID string) error {
	return updateAWSData(c, func(d *awsFaceData) error {
		d.Initialized = true
		d.Keys = slices.DeleteFunc(d.Keys, func(o AWSKey) bool { return o.AccessKeyID == accessKeyID })
		return nil
	})
}

// AWSKeys returns the access keys the AWS face of c has registered.
func AWSKeys(c *core.Cloud) []AWSKey { return slices.Clone(readAWSData(c).Keys) }

// key finds an access key: the face's own (Keys), else those registered in
// c's data.
func (f *AWSFace) key(c *core.Cloud, id string) (AWSKey, bool) {
	for _, k := range f.Keys {
		if k.AccessKeyID == id {
			if k.AccountID == "" {
				k.AccountID = AWSDefaultAccountID
			}
			return k, true
		}
	}
	for _, k := range readAWSData(c).Keys {
		if k.AccessKeyID == id {
			return k, true
		}
	}
	return AWSKey{}, false
}

const (
	sigV4Algorithm   = "AWS4-HMAC-SHA256"
	amzDateFormat    = "20060102T150405Z"
	msgSignatureASG  = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
	msgAuthFailure   = "AWS was not able to validate the provided access credentials"
	msgInvalidToken  = "The security token included in the request is invalid."
	msgMissingTokenA = "Request is missing Authentication Token"
	msgMissingTokenE = "The request must contain either a valid (registered) AWS access key ID or X.509 certificate."
)

// sigV4Auth is a parsed Authorization header (or presigned query).
type sigV4Auth struct {
	accessKey, date, region, service string
	signedHeaders                    []string
	signature                        string
	amzDate                          string
	presigned                        bool
}

// parseSigV4 reads the request's SigV4 authorization: the Authorization
// header, else the presigned query parameters. ok is false when there is
// none; err when it is malformed.
func parseSigV4(r *http.Request) (a sigV4Auth, ok bool, err error) {
	h := r.Header.Get("Authorization")
	q := r.URL.Query()
	var cred, signed string
	switch {
	case h != "":
		alg, rest, _ := strings.Cut(h, " ")
		if alg != sigV4Algorithm {
			return a, true, fmt.Errorf("Unsupported authorization type: %s", alg)
		}
		for _, part := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch k {
			case "Credential":
				cred = v
			case "SignedHeaders":
				signed = v
			case "Signature":
				a.signature = v
			}
		}
		a.amzDate = r.Header.Get("X-Amz-Date")
	case q.Get("X-Amz-Algorithm") != "":
		if q.Get("X-Amz-Algorithm") != sigV4Algorithm {
			return a, true, fmt.Errorf("Unsupported authorization type: %s", q.Get("X-Amz-Algorithm"))
		}
		cred, signed, a.signature, a.amzDate, a.presigned = q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature"), q.Get("X-Amz-Date"), true
	default:
		return a, false, nil
	}
	switch {
	case cred == "":
		return a, true, fmt.Errorf("Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter.")
	case signed == "" || a.signature == "":
		return a, true, fmt.Errorf("Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter.")
	case a.amzDate == "":
		return a, true, fmt.Errorf("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return a, true, fmt.Errorf("Credential should be scoped to a valid region, not '%s'. Credential should be scoped to correct service.", cred)
	}
	a.accessKey, a.date, a.region, a.service = parts[0], parts[1], parts[2], parts[3]
	a.signedHeaders = strings.Split(signed, ";")
	return a, true, nil
}

// SigV4Signer is who signed a request whose Signature Version 4 the face
// verified: the access key's account and the credential scope's region.
type SigV4Signer struct {
	Account, Region string
}

// AuthReason says why the face refuses a request's Signature Version 4.
type AuthReason int

const (
	// AuthMissing: the request has no Authorization header and no
	// presigned query.
	AuthMissing AuthReason = iota + 1
	// AuthMalformed: the authorization cannot be read.
	AuthMalformed
	// AuthUnknownKey: the access key is not one the face accepts.
	AuthUnknownKey
	// AuthBadDate: X-Amz-Date is no date, or not the credential scope's.
	AuthBadDate
	// AuthExpired: X-Amz-Date is further from the cloud's clock than the
	// face's ClockSkew.
	AuthExpired
	// AuthMismatch: the signature is not the request's (or not signed for
	// the service).
	AuthMismatch
)

// AuthError is a refused signature: why, and what a service's error
// answer is made of.
type AuthError struct {
	Reason AuthReason
	// Message is Auto Scaling's message for the refusal (for
	// AuthMalformed, what cannot be read).
	Message string
	// AmzDate is the request's X-Amz-Date; Now the cloud's time and Skew
	// the clock skew the face allows (AuthExpired's message names them).
	AmzDate string
	Now     time.Time
	Skew    time.Duration
}

func (e *AuthError) Error() string { return e.Message }

// AWSAmzDateFormat is the layout of X-Amz-Date and of the dates SigV4's
// error messages name.
const AWSAmzDateFormat = amzDateFormat

// VerifySigV4 verifies r's Signature Version 4 (its Authorization header,
// else its presigned query) over body against the face's access keys (Keys
// and those registered in c's data) and clock skew, and that it is signed
// for service (any service when ""). Every service of the simulated AWS
// checks its requests so; each answers an AuthError in its own shape.
func (f *AWSFace) VerifySigV4(c *core.Cloud, r *http.Request, body []byte, service string) (SigV4Signer, *AuthError) {
	a, ok, err := parseSigV4(r)
	switch {
	case !ok:
		return SigV4Signer{}, &AuthError{Reason: AuthMissing, Message: msgMissingTokenA}
	case err != nil:
		return SigV4Signer{}, &AuthError{Reason: AuthMalformed, Message: err.Error()}
	}
	key, found := f.key(c, a.accessKey)
	if !found {
		return SigV4Signer{}, &AuthError{Reason: AuthUnknownKey, Message: msgInvalidToken}
	}
	now := c.Clock().Now().UTC()
	t, err := time.Parse(amzDateFormat, a.amzDate)
	if err != nil || a.date != a.amzDate[:min(8, len(a.amzDate))] {
		return SigV4Signer{}, &AuthError{Reason: AuthBadDate, Message: msgSignatureASG}
	}
	skew := f.clockSkew()
	if d := now.Sub(t); d > skew || d < -skew {
		mins := int(skew / time.Minute)
		msg := fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - %d min.)",
			a.amzDate, now.Add(-skew).Format(amzDateFormat), now.Format(amzDateFormat), mins)
		if d < 0 {
			msg = fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + %d min.)",
				a.amzDate, now.Add(skew).Format(amzDateFormat), now.Format(amzDateFormat), mins)
		}
		return SigV4Signer{}, &AuthError{Reason: AuthExpired, Message: msg, AmzDate: a.amzDate, Now: now, Skew: skew}
	}
	want := sigV4Signature(key.SecretAccessKey, a, canonicalRequest(r, a, body))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(a.signature))) || service != "" && a.service != service {
		return SigV4Signer{}, &AuthError{Reason: AuthMismatch, Message: msgSignatureASG}
	}
	return SigV4Signer{Account: key.AccountID, Region: a.region}, nil
}

// authenticate verifies the request's Signature Version 4 and sets the
// request's account and region; when it cannot, it answers the service's
// error and reports false.
func (h *awsHandler) authenticate(w http.ResponseWriter, r *http.Request, req *awsRequest) bool {
	s, aerr := h.face.VerifySigV4(h.env.Cloud, r, req.body, "")
	if aerr == nil {
		req.account, req.region = s.Account, s.Region
		return true
	}
	if req.service == awsapi.ServiceEC2 {
		switch aerr.Reason {
		case AuthMissing:
			h.writeError(w, req, http.StatusUnauthorized, awsapi.CodeMissingAuthToken, msgMissingTokenE)
		case AuthMalformed:
			h.writeError(w, req, http.StatusUnauthorized, awsapi.CodeAuthFailure, aerr.Message)
		case AuthExpired:
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeRequestExpired, "Request has expired.")
		default:
			h.writeError(w, req, http.StatusUnauthorized, awsapi.CodeAuthFailure, msgAuthFailure)
		}
		return false
	}
	code := map[AuthReason]string{
		AuthMissing: awsapi.CodeMissingAuthToken, AuthMalformed: awsapi.CodeIncompleteSignature, AuthUnknownKey: awsapi.CodeInvalidClientTokenID,
		AuthBadDate: awsapi.CodeSignatureDoesNotMatch, AuthExpired: awsapi.CodeSignatureDoesNotMatch, AuthMismatch: awsapi.CodeSignatureDoesNotMatch,
	}[aerr.Reason]
	h.writeError(w, req, http.StatusForbidden, code, aerr.Message)
	return false
}

// canonicalRequest is SigV4's canonical request of r:
//
//	Method \n CanonicalURI \n CanonicalQuery \n CanonicalHeaders \n SignedHeaders \n HashedPayload
//
// over the path as sent (r.RequestURI, URI-encoded once more, as the SDKs
// do for every service but S3), the query sorted and strictly encoded (less
// X-Amz-Signature when presigned), the signed headers lowercased, trimmed
// and with inner spaces collapsed, and the SHA-256 of the body.
func canonicalRequest(r *http.Request, a sigV4Auth, body []byte) string {
	rawPath, rawQuery, _ := strings.Cut(r.RequestURI, "?")
	if rawPath == "" || !strings.HasPrefix(rawPath, "/") {
		rawPath = r.URL.EscapedPath()
	}
	if rawPath == "" {
		rawPath = "/"
	}
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(sigV4Escape(rawPath, false))
	b.WriteByte('\n')

	type kv struct{ k, v string }
	var pairs []kv
	for _, p := range strings.Split(rawQuery, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		if a.presigned && k == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, kv{sigV4Escape(k, true), sigV4Escape(v, true)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k + "=" + p.v)
	}
	b.WriteByte('\n')

	for _, name := range a.signedHeaders {
		var vals []string
		switch name {
		case "host":
			vals = []string{r.Host}
		case "content-length":
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		case "transfer-encoding":
			vals = r.TransferEncoding
		default:
			vals = r.Header.Values(name)
		}
		for i, v := range vals {
			vals[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(name + ":" + strings.Join(vals, ",") + "\n")
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(a.signedHeaders, ";"))
	b.WriteByte('\n')
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash != "UNSIGNED-PAYLOAD" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	if a.presigned && hash == "" {
		hash = "UNSIGNED-PAYLOAD"
	}
	b.WriteString(hash)
	return b.String()
}

// sigV4Signature is the hex HMAC-SHA256 of the string to sign,
//
//	AWS4-HMAC-SHA256 \n X-Amz-Date \n date/region/service/aws4_request \n hex(SHA256(canonical request))
//
// with the key derived from the secret: HMAC("AWS4"+secret, date), then
// region, service and "aws4_request".
func sigV4Signature(secret string, a sigV4Auth, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	scope := a.date + "/" + a.region + "/" + a.service + "/aws4_request"
	sts := sigV4Algorithm + "\n" + a.amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	k := hmacSHA256([]byte("AWS4"+secret), a.date)
	k = hmacSHA256(k, a.region)
	k = hmacSHA256(k, a.service)
	k = hmacSHA256(k, "aws4_request")
	return hex.EncodeToString(hmacSHA256(k, sts))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// sigV4Escape URI-encodes s as SigV4 wants: every byte but the unreserved
// characters A-Z a-z 0-9 - _ . ~ (and '/' unless encodeSlash) as %XX,
// uppercase.
func sigV4Escape(s string, encodeSlash bool) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && !encodeSlash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
	return b.String()
}
