package testenv

import (
	"context"
	"net/http"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RoundTripFunc is an http.RoundTripper of a function: a rest.Config's Wrap
// with it sees (counts, records) a client's requests.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// StaleClient reads one object, Stale, as it was at some point, as a cache
// that has not caught up with the writes since would; every other read and
// every write goes to Client. Tests give it to a reconciler to check what
// the reconciler does with a stale read.
type StaleClient struct {
	client.Client
	Stale client.Object
}

// Get implements client.Reader.
func (c StaleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if reflect.TypeOf(obj) == reflect.TypeOf(c.Stale) && key == client.ObjectKeyFromObject(c.Stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.Stale.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
