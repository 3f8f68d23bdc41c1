package azureface

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// AzureClient is a service principal of the simulated Entra ID: an
// application (client) registered in a tenant with a client secret.
type AzureClient struct {
	TenantID     string `json:"tenantID"`
	ClientID     string `json:"clientID"`
	ClientSecret string `json:"clientSecret"`
	// ExpiresAt, when set, is when the secret expires: token requests
	// after it fail with AADSTS7000222, as Entra's do.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// azureFaceData is the Azure face's own persisted data (Cloud.FaceData).
type azureFaceData struct {
	// Initialized is set once the client list was written: before, it
	// holds the default client.
	Initialized bool          `json:"initialized,omitempty"`
	Clients     []AzureClient `json:"clients,omitempty"`
	// TokenKey signs access tokens (hex), so they stay valid across
	// restarts.
	TokenKey string `json:"tokenKey,omitempty"`
	// AKSClusters are the simulated AKS's managed clusters and their agent
	// pools (aks.go).
	AKSClusters []aksCluster `json:"aksClusters,omitempty"`
}

func defaultAzureClient() AzureClient {
	return AzureClient{TenantID: AzureDefaultTenantID, ClientID: AzureDefaultClientID, ClientSecret: AzureDefaultClientSecret}
}

func readAzureData(raw json.RawMessage) azureFaceData {
	d := core.DecodePayload[azureFaceData](raw)
	d.defaults()
	return d
}

// azureView is the face's data of c, shared with every other reader until
// it changes (core.FaceDataAs): what a request reads to authenticate (the
// clients, the token key), never changed; changes go through
// updateAzureData, and code that changes what it read decodes its own copy
// (readAzureData).
func azureView(c *core.Cloud) azureFaceData {
	d := core.FaceDataAs[azureFaceData](c, AzureFaceName)
	d.defaults()
	return d
}

// defaults gives data whose client list was never written the default
// client.
func (d *azureFaceData) defaults() {
	if !d.Initialized {
		d.Clients = []AzureClient{defaultAzureClient()}
	}
}

// updateAzureData changes the face's data atomically; fn's error leaves it
// unchanged.
func updateAzureData(c *core.Cloud, fn func(*azureFaceData) error) (azureFaceData, error) {
	return core.UpdateFaceDataAs(c, AzureFaceName, func(d *azureFaceData) error {
		d.defaults()
		return fn(d)
	})
}

// AzureSetClient registers a service principal with the Azure face of c (or
// replaces the secret of the one with the same tenant and client ID). The
// default client (AzureDefaultClientID) is registered until deleted.
func AzureSetClient(c *core.Cloud, cl AzureClient) error {
	if cl.TenantID == "" || cl.ClientID == "" || cl.ClientSecret == "" {
		return core.Invalidf("an Azure client needs a tenant ID, a client ID and a client secret")
	}
	_, err := updateAzureData(c, func(d *azureFaceData) error {
		d.Initialized = true
		d.Clients = slices.DeleteFunc(d.Clients, func(o AzureClient) bool {
			return strings.EqualFold(o.TenantID, cl.TenantID) && strings.EqualFold(o.ClientID, cl.ClientID)
		})
		d.Clients = append(d.Clients, cl)
		return nil
	})
	return err
}

// AzureDeleteClient removes a service principal from the Azure face of c;
// its tokens already issued stay valid until they expire.
func AzureDeleteClient(c *core.Cloud, tenantID, clientID string) error {
	_, err := updateAzureData(c, func(d *azureFaceData) error {
		d.Initialized = true
		d.Clients = slices.DeleteFunc(d.Clients, func(o AzureClient) bool {
			return strings.EqualFold(o.TenantID, tenantID) && strings.EqualFold(o.ClientID, clientID)
		})
		return nil
	})
	return err
}

// AzureClients returns the service principals the Azure face of c accepts.
func AzureClients(c *core.Cloud) []AzureClient {
	return slices.Clone(azureView(c).Clients)
}

// tokenKey returns the face's token signing key, creating it on first use.
func (h *azureHandler) tokenKey() ([]byte, error) {
	return core.FaceKey(func() azureFaceData { return azureView(h.env.Cloud) },
		func(fn func(*azureFaceData) error) (azureFaceData, error) { return updateAzureData(h.env.Cloud, fn) },
		func(d *azureFaceData) *string { return &d.TokenKey })
}

// azureClaims are the claims of the face's access tokens (a JWT signed
// with HS256 by the face's key; clients treat it as opaque).
type azureClaims struct {
	Aud   string `json:"aud"`
	Iss   string `json:"iss"`
	Iat   int64  `json:"iat"`
	Nbf   int64  `json:"nbf"`
	Exp   int64  `json:"exp"`
	AppID string `json:"appid"`
	Tid   string `json:"tid"`
	Oid   string `json:"oid"`
	Sub   string `json:"sub"`
	Ver   string `json:"ver"`
}

var b64 = base64.RawURLEncoding

// azureTokenPrefix is the header of the face's access tokens and its ".":
// they are HS256 JWTs (core.SignToken).
var azureTokenPrefix = b64.EncodeToString([]byte(`{"typ":"JWT","alg":"HS256","kid":"mpool-simulated"}`)) + "."

func signToken(key []byte, c azureClaims) string { return core.SignToken(key, azureTokenPrefix, c) }

func verifyToken(key []byte, tok string) (azureClaims, bool) {
	var c azureClaims
	ok := core.VerifyToken(key, azureTokenPrefix, tok, &c)
	return c, ok
}

func writeEntraError(w http.ResponseWriter, status int, code string, aadsts int, desc string) {
	now := time.Now().UTC()
	admin.WriteJSON(w, status, azureapi.TokenError{
		Error:            code,
		ErrorDescription: fmt.Sprintf("AADSTS%d: %s Trace ID: 00000000-0000-0000-0000-000000000000 Correlation ID: 00000000-0000-0000-0000-000000000000 Timestamp: %s", aadsts, desc, now.Format("2006-01-02 15:04:05Z")),
		ErrorCodes:       []int{aadsts},
		Timestamp:        now.Format("2006-01-02 15:04:05Z"),
		TraceID:          "00000000-0000-0000-0000-000000000000",
		CorrelationID:    "00000000-0000-0000-0000-000000000000",
		ErrorURI:         "https://login.microsoftonline.com/error?code=" + fmt.Sprint(aadsts),
	})
}

// token serves POST /{tenant}/oauth2/v2.0/token: the client-credentials
// grant with a client secret.
func (h *azureHandler) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		writeEntraError(w, http.StatusBadRequest, azureapi.EntraInvalidRequest, 900144, "The request body must contain a form.")
		return
	}
	tenant := r.PathValue("tenant")
	grant, id, secret := r.PostForm.Get("grant_type"), r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	// MSAL adds the OpenID Connect scopes, which Entra ignores here.
	var scopes []string
	for _, s := range strings.Fields(r.PostForm.Get("scope")) {
		switch s {
		case "openid", "offline_access", "profile", "email":
		default:
			scopes = append(scopes, s)
		}
	}
	scope := strings.Join(scopes, " ")
	switch {
	case grant != "client_credentials":
		writeEntraError(w, http.StatusBadRequest, azureapi.EntraUnsupported, 70003,
			fmt.Sprintf("The app requested an unsupported grant type '%s'. The simulated Entra ID supports client_credentials only.", grant))
		return
	case id == "":
		writeEntraError(w, http.StatusBadRequest, azureapi.EntraInvalidRequest, 900144, "The request body must contain the following parameter: 'client_id'.")
		return
	case secret == "":
		writeEntraError(w, http.StatusUnauthorized, azureapi.EntraInvalidClient, 7000216, "'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type.")
		return
	case len(scopes) != 1 || !strings.HasSuffix(scope, "/.default"):
		writeEntraError(w, http.StatusBadRequest, azureapi.EntraInvalidScope, 1002012,
			fmt.Sprintf("The provided value for scope %s is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).", scope))
		return
	}
	clients := slices.Concat(azureView(h.env.Cloud).Clients, h.face.Clients)
	var cl *AzureClient
	tenantKnown := false
	for i, c := range clients {
		if strings.EqualFold(c.TenantID, tenant) {
			tenantKnown = true
			if cl == nil && strings.EqualFold(c.ClientID, id) {
				cl = &clients[i]
			}
		}
	}
	now := h.env.Cloud.Clock().Now()
	switch {
	case !tenantKnown:
		writeEntraError(w, http.StatusBadRequest, azureapi.EntraInvalidRequest, 90002,
			fmt.Sprintf("Tenant '%s' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.", tenant))
		return
	case cl == nil:
		writeEntraError(w, http.StatusBadRequest, azureapi.EntraUnauthorized, 700016,
			fmt.Sprintf("Application with identifier '%s' was not found in the directory '%s'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant.", id, tenant))
		return
	case subtle.ConstantTimeCompare([]byte(cl.ClientSecret), []byte(secret)) != 1:
		writeEntraError(w, http.StatusUnauthorized, azureapi.EntraInvalidClient, 7000215,
			fmt.Sprintf("Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '%s'.", id))
		return
	case cl.ExpiresAt != nil && !now.Before(*cl.ExpiresAt):
		writeEntraError(w, http.StatusUnauthorized, azureapi.EntraInvalidClient, 7000222,
			fmt.Sprintf("The provided client secret keys for app '%s' are expired. Visit the Azure portal to create new keys for your app.", id))
		return
	}
	key, err := h.tokenKey()
	if err != nil {
		writeEntraError(w, http.StatusInternalServerError, "server_error", 50000, err.Error())
		return
	}
	life := h.face.tokenLifetime()
	aud := strings.TrimSuffix(scope, ".default")
	tok := signToken(key, azureClaims{
		Aud: aud, Iss: "https://sts.windows.net/" + tenant + "/", Iat: now.Unix(), Nbf: now.Unix(), Exp: now.Add(life).Unix(),
		AppID: id, Tid: tenant, Oid: id, Sub: id, Ver: "1.0",
	})
	secs := int(life / time.Second)
	admin.WriteJSON(w, http.StatusOK, azureapi.TokenResponse{TokenType: "Bearer", ExpiresIn: secs, ExtExpiresIn: secs, AccessToken: tok})
}

// discovery serves the OpenID configuration of a tenant and the instance
// discovery document.
func (h *azureHandler) discovery(w http.ResponseWriter, r *http.Request) {
	base := h.baseURL(r)
	tenant := r.PathValue("tenant")
	if tenant == "" {
		host := r.Host
		admin.WriteJSON(w, http.StatusOK, azureapi.InstanceDiscovery{
			TenantDiscoveryEndpoint: base + "/common/v2.0/.well-known/openid-configuration",
			APIVersion:              "1.1",
			Metadata:                []azureapi.InstanceDiscoveryMetadata{{PreferredNetwork: host, PreferredCache: host, Aliases: []string{host}}},
		})
		return
	}
	t := url.PathEscape(tenant)
	admin.WriteJSON(w, http.StatusOK, azureapi.OpenIDConfiguration{
		TokenEndpoint:                     base + "/" + t + "/oauth2/v2.0/token",
		TokenEndpointAuthMethodsSupported: []string{"client_secret_post", "private_key_jwt", "client_secret_basic"},
		JWKSURI:                           base + "/" + t + "/discovery/v2.0/keys",
		ResponseModesSupported:            []string{"query", "fragment", "form_post"},
		SubjectTypesSupported:             []string{"pairwise"},
		IDTokenSigningAlgValuesSupported:  []string{"RS256"},
		ResponseTypesSupported:            []string{"code", "id_token", "code id_token", "id_token token"},
		ScopesSupported:                   []string{"openid", "profile", "email", "offline_access"},
		Issuer:                            base + "/" + t + "/v2.0",
		AuthorizationEndpoint:             base + "/" + t + "/oauth2/v2.0/authorize",
		DeviceAuthorizationEndpoint:       base + "/" + t + "/oauth2/v2.0/devicecode",
		EndSessionEndpoint:                base + "/" + t + "/oauth2/v2.0/logout",
		CloudInstanceName:                 "mpool.simulated",
	})
}

// authorize checks an ARM request's bearer token, answering 401 with ARM's
// error body when it is missing, malformed, not the face's, or expired.
func (h *azureHandler) authorize(w http.ResponseWriter, r *http.Request) bool {
	fail := func(code, msg string) bool {
		w.Header().Set("WWW-Authenticate", `Bearer authorization_uri="`+h.baseURL(r)+`/common", error="invalid_token", error_description="`+msg+`"`)
		writeARMError(w, http.StatusUnauthorized, code, msg)
		return false
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return fail(azureapi.CodeAuthenticationFailed, "Authentication failed. The 'Authorization' header is missing.")
	}
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return fail(azureapi.CodeAuthenticationFailed, "Authentication failed. The 'Authorization' header is provided in an invalid format.")
	}
	key, err := h.tokenKey()
	if err != nil {
		writeARMError(w, http.StatusInternalServerError, azureapi.CodeInternalServerError, err.Error())
		return false
	}
	c, ok := verifyToken(key, strings.TrimSpace(tok))
	if !ok {
		return fail(azureapi.CodeInvalidAuthenticationToken, "The access token is invalid.")
	}
	now := h.env.Cloud.Clock().Now()
	if now.Unix() >= c.Exp {
		return fail(azureapi.CodeExpiredAuthenticationToken,
			fmt.Sprintf("The access token expiry UTC time '%s' is earlier than current UTC time '%s'.",
				time.Unix(c.Exp, 0).UTC().Format("1/2/2006 3:04:05 PM"), now.UTC().Format("1/2/2006 3:04:05 PM")))
	}
	if !armAudience(c.Aud) {
		return fail(azureapi.CodeInvalidAuthenticationToken, fmt.Sprintf("The access token has an invalid audience '%s'.", c.Aud))
	}
	return true
}

// armAudience accepts the audiences of Azure Resource Manager: Azure's
// public ones and any https URL on loopback (the face's own URL, whatever
// its port after a restart).
func armAudience(aud string) bool {
	u, err := url.Parse(aud)
	if err != nil || u.Scheme != "https" {
		return false
	}
	switch u.Hostname() {
	case "management.azure.com", "management.core.windows.net", "127.0.0.1", "::1", "localhost":
		return true
	}
	return false
}

// RegisterAdmin implements core.AdminFace: the face's service principals
// (Entra ID applications with a client secret) under /admin/azure/clients:
// GET lists them, PUT registers or replaces one, DELETE removes one.
func (f *AzureFace) RegisterAdmin(mux *http.ServeMux, c *core.Cloud) {
	mux.HandleFunc("GET /admin/azure/clients", func(w http.ResponseWriter, _ *http.Request) {
		admin.WriteJSON(w, http.StatusOK, map[string][]AzureClient{"clients": AzureClients(c)})
	})
	admin.HandlePut(mux, "PUT /admin/azure/clients", func(_ *http.Request, cl AzureClient) (any, error) {
		return cl, AzureSetClient(c, cl)
	})
	mux.HandleFunc("DELETE /admin/azure/clients/{tenant}/{client}", func(w http.ResponseWriter, r *http.Request) {
		if err := AzureDeleteClient(c, r.PathValue("tenant"), r.PathValue("client")); err != nil {
			admin.WriteError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
