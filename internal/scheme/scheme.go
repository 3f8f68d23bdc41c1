// Package scheme builds the runtime scheme every mpool client and manager
// uses: client-go's built-in types plus every mpool API group.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

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
