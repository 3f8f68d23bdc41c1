// Package kit holds what every provider needs and none should write again:
// its configuration's shape (Config: flags, the simulated cloud, building
// the ScaleGroup; Env, Simulated), Retry-After parsing (RetryAfter), the SDK
// client cache per scope and credentials (ClientCache), the credential cache
// per identity version (CredentialCache), cluster identities'
// allowedNamespaces (CheckAllowedNamespace), reading an identity or its
// Secret (ReadCredentialsObject), typed credential resolution
// (ResolveCredentials) and the manager's own credentials for a Ref that
// names no identity (OwnCredentials), mirroring the engine's conditions
// under a provider's own names and reasons (MirrorConditions, ReadyAlias),
// and the Adapter's parts that every kind shares: its objects and kinds
// from its Go types (Objects), the per-instance and pool fields of the
// contract, written and read in one place (InstanceFields, PoolFields,
// InstanceView), the cloud's words for the engine's instance states
// (StateWords), the tags of every group (PoolTags), the providers' parts of
// a model (ModelPart), and small helpers (an HTTP client trusting a CA
// file, OneLine, UniqueIDs). A provider imports the contract and the kit;
// the kit imports no provider, no engine and no cloud SDK (hack/layers).
package kit
