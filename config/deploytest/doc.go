// Package deploytest checks the deployment manifests in config/: that
// `kubectl apply -k config/default` renders, applies to a real API server,
// grants the manager what it needs and nothing by wildcard.
package deploytest
