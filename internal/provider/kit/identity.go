package kit

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// CheckAllowedNamespace checks that a cluster identity (identity names it
// in messages, e.g. "AzureClusterIdentity ns/name") lets namespace use it:
// its allowedNamespaces as CAPZ and CAPA read them
// (infrav1.AllowedNamespaces.Allows), the namespace's labels read with r
// when a selector needs them. A refusal is Unauthorized, a selector that
// does not parse Invalid, a failed read Transient.
func CheckAllowedNamespace(ctx context.Context, r client.Reader, allowed *infrav1.AllowedNamespaces, identity, namespace string) error {
	ok, err := allowed.Allows(namespace, func() (map[string]string, error) {
		ns := &corev1.Namespace{}
		if err := r.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
			return nil, scalegroup.NewTransient("reading namespace "+namespace, err)
		}
		return ns.Labels, nil
	})
	switch {
	case scalegroup.ReasonOf(err) != "":
		return err
	case err != nil:
		return scalegroup.NewInvalid(fmt.Sprintf("%s: %v", identity, err))
	case !ok:
		return scalegroup.NewUnauthorized(fmt.Sprintf("%s does not allow namespace %q: add it to the identity's spec.allowedNamespaces", identity, namespace), nil)
	}
	return nil
}

// ReadCredentialsObject reads obj, named key, with r: an object that
// credentials are resolved from (a cluster identity, the Secret holding its
// key). A missing object is Unauthorized, its message missing (saying what
// to create or fix); a failed read is Transient, "reading " + what.
func ReadCredentialsObject(ctx context.Context, r client.Reader, key types.NamespacedName, obj client.Object, what, missing string) error {
	switch err := r.Get(ctx, key, obj); {
	case apierrors.IsNotFound(err):
		return scalegroup.NewUnauthorized(missing, nil)
	case err != nil:
		return scalegroup.NewTransient("reading "+what, err)
	}
	return nil
}

// ResolveCredentials returns what resolve resolves for ref (a provider's
// credentials resolver): its typed errors and the context's are kept as
// they are; any other error, and no credentials at all, are Unauthorized,
// naming whose credentials they are (name, e.g. "AzureClusterIdentity
// ns/name" or "the manager's own AWS credentials").
func ResolveCredentials[T any](ctx context.Context, ref scalegroup.Ref, name string, resolve func(context.Context, scalegroup.Ref) (T, error)) (T, error) {
	creds, err := resolve(ctx, ref)
	if err != nil {
		if scalegroup.ReasonOf(err) != "" || ctx.Err() != nil {
			return creds, err
		}
		return creds, scalegroup.NewUnauthorized("resolving the credentials of "+name, err)
	}
	if any(creds) == nil {
		return creds, scalegroup.NewUnauthorized("no credentials for "+name, nil)
	}
	return creds, nil
}

// OwnCredentials returns def, the manager's own credentials, for a Ref that
// names no identity; none (def the zero value) is Unauthorized, hint saying
// how to name an identity or give the manager credentials.
func OwnCredentials[T comparable](def T, hint string) (T, error) {
	var none T
	if def == none {
		return none, scalegroup.NewUnauthorized(hint, nil)
	}
	return def, nil
}
