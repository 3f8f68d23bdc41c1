// Package kit holds what every provider needs and none should write again:
// mirroring the engine's conditions under a provider's own names, and the
// helpers providers share for credentials, retries and cloud clients. A
// provider imports the contract and the kit; the kit imports no provider,
// no engine and no cloud SDK.
package kit
