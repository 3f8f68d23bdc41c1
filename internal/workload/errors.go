package workload

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// ErrClusterNotConnected is matched (errors.Is) by every error that means a
// workload cluster cannot be reached: its kubeconfig Secret is missing or
// unusable, or its API server does not answer.
var ErrClusterNotConnected = errors.New("workload cluster is not connected")

// Reasons a workload cluster is not connected, as ConnectionError.Reason.
const (
	// ReasonSecretNotFound: the <cluster>-kubeconfig Secret does not exist.
	ReasonSecretNotFound = "KubeconfigSecretNotFound"
	// ReasonInvalidKubeconfig: the Secret has no "value" key or it does not
	// parse as a kubeconfig.
	ReasonInvalidKubeconfig = "InvalidKubeconfig"
	// ReasonUnreachable: the API server did not answer within the timeouts.
	ReasonUnreachable = "APIServerUnreachable"
)

// ConnectionError says why a workload cluster cannot be reached.
type ConnectionError struct {
	// Cluster is the Cluster whose workload cluster could not be reached.
	Cluster types.NamespacedName
	// Reason is one of the Reason* constants.
	Reason string
	// Err is the underlying error.
	Err error
}

// Error implements error.
func (e *ConnectionError) Error() string {
	return fmt.Sprintf("workload cluster of Cluster %s is not connected (%s): %v", e.Cluster, e.Reason, e.Err)
}

// Unwrap returns the underlying error.
func (e *ConnectionError) Unwrap() error { return e.Err }

// Is makes every ConnectionError match ErrClusterNotConnected.
func (e *ConnectionError) Is(target error) bool { return target == ErrClusterNotConnected }

// IsConnectionError reports whether err (or an error it wraps) means a
// workload cluster cannot be reached.
func IsConnectionError(err error) bool { return errors.Is(err, ErrClusterNotConnected) }

// ConnectionErrorReason returns the Reason of the ConnectionError in err's
// chain, or "" when there is none.
func ConnectionErrorReason(err error) string {
	var ce *ConnectionError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}
