package kit

import (
	"reflect"
	"sync"
)

// MaxCachedClients bounds a ClientCache: past it the cache starts again
// empty (identities come and go; a manager must not grow without bound).
const MaxCachedClients = 256

// ClientCache holds a provider's SDK clients by key (a region or
// subscription and the credentials they are reached with), so that one set
// of clients serves every call with the same credentials. Keys whose
// dynamic types are not comparable (credentials the resolver builds anew
// on each call) are never cached. The zero value is ready to use.
type ClientCache[K comparable, V any] struct {
	mu      sync.Mutex
	clients map[K]V
}

// Get returns the clients of key, built by build the first time (or again
// after the cache was emptied).
func (c *ClientCache[K, V]) Get(key K, build func() (V, error)) (V, error) {
	cacheable := reflect.ValueOf(key).Comparable()
	if cacheable {
		c.mu.Lock()
		v, ok := c.clients[key]
		c.mu.Unlock()
		if ok {
			return v, nil
		}
	}
	v, err := build()
	if err != nil || !cacheable {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clients == nil || len(c.clients) >= MaxCachedClients {
		c.clients = map[K]V{}
	}
	c.clients[key] = v
	return v, nil
}

// CredentialCache holds the credentials built from identities (a cluster
// identity and its Secret), by identity, rebuilt only when the identity or
// its Secret changes (their resourceVersions, the version), so that each
// credential's tokens are reused meanwhile. The zero value is ready to use.
type CredentialCache[V any] struct {
	mu    sync.Mutex
	cache map[string]versioned[V]
}

type versioned[V any] struct {
	version string
	value   V
}

// Get returns the credential of identity at version, built by build when
// the cache holds none of that version.
func (c *CredentialCache[V]) Get(identity, version string, build func() (V, error)) (V, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.cache[identity]; ok && got.version == version {
		return got.value, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	if c.cache == nil {
		c.cache = map[string]versioned[V]{}
	}
	c.cache[identity] = versioned[V]{version: version, value: v}
	return v, nil
}
