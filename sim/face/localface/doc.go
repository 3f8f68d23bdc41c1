// Package localface is the simulated cloud's local face: the small JSON
// API of package localapi (/v1/groups: list, get, put, delete instances,
// delete) that the local provider (internal/provider/local) speaks, served
// at the root of every Server's URL. It only translates; the core decides.
// Its groups have the empty scope, its instances the providerID
// local:///<group>/<id> (core.ProviderID) and the host name <group>-<id>;
// errors are localapi.ErrorResponse with the core's error codes (package
// admin maps them onto HTTP: 404 NotFound, 400 InvalidParameter, 409
// QuotaExceeded or Conflict), injected faults 429 TooManyRequests with
// Retry-After or the drawn 5xx.
package localface
