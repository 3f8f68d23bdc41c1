// Package api is the root of mpool's API types. Each group/version lives in its own
// package (core/v1beta1, bootstrap/v1beta1, infrastructure/v1beta1); this package
// registers all of them with a scheme in one call.
package api
