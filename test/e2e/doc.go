// Package e2e runs mpool the way a user does: the built binary as a
// subprocess, driven only through its output and the API server it starts.
package e2e
