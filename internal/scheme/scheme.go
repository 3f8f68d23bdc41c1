// Package scheme builds the runtime scheme every mpool client and manager
// uses: client-go's built-in types plus every mpool API group.
package scheme

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/api"
)

// New returns a scheme with client-go's types and every mpool group.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := api.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// NewClient returns an uncached client of the API server cfg reaches, with
// New's scheme (the client's Scheme()).
func NewClient(cfg *rest.Config) (client.Client, error) {
	s, err := New()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", cfg.Host, err)
	}
	return c, nil
}
