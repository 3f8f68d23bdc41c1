package azure

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// CAPZ's types of a Future (status.longRunningOperationStates).
const (
	FuturePut    = "PUT"
	FutureDelete = "DELETE"
)

// Future records op, a long-running operation in progress on the group
// named by groupRef (the pool's contract.GroupRefAnnotation; name when it
// cannot be read), as CAPZ keeps it in status.longRunningOperationStates:
// the service that started it, the resource and the poller's resume token
// (Data, "" when op has none).
func Future(service string, op *scalegroup.Operation, groupRef, name string) infrav1.Future {
	f := infrav1.Future{Type: FuturePut, ServiceName: service, Name: name, Data: op.ResumeToken}
	if op.Type == scalegroup.OperationDelete {
		f.Type = FutureDelete
	}
	if ref, err := scalegroup.DecodeRef(groupRef); err == nil {
		f.Name = ref.Name
		if _, rg, ok := strings.Cut(ref.Scope, "/resourceGroups/"); ok {
			f.ResourceGroup, _, _ = strings.Cut(rg, "/")
		}
	}
	return f
}

// RecordedOperation is the operation of service a pool recorded (Future)
// with a poller's resume token, nil when none: the engine hands it back
// to the provider's Get (scalegroup.WithRecordedOperation), so that a
// restarted manager resumes the operation, as CAPZ resumes a future
// kept in status, instead of writing the group again.
func RecordedOperation(futures []infrav1.Future, service string) *scalegroup.Operation {
	for _, f := range futures {
		if f.ServiceName != service || !isResumeToken(f.Data) {
			continue
		}
		op := &scalegroup.Operation{Type: scalegroup.OperationUpdate, ResumeToken: f.Data}
		if f.Type == FutureDelete {
			op.Type = scalegroup.OperationDelete
		}
		return op
	}
	return nil
}

// isResumeToken reports whether data is a poller's resume token (azcore's
// are JSON objects), not an operation's ID recorded in its place.
func isResumeToken(data string) bool {
	return strings.HasPrefix(data, "{") && json.Valid([]byte(data))
}

// OperationFailure is why the long-running operation of p, resumed from
// its token (err is the resumption's), failed, in Azure's words ("code:
// message"): one poll of the operation's status. "" while it is in
// progress, when it succeeded, or when it cannot be read.
func OperationFailure[T any](ctx context.Context, p *runtime.Poller[T], err error) string {
	if err != nil {
		return ""
	}
	if _, err := p.Poll(ctx); err != nil || !p.Done() {
		return ""
	}
	_, err = p.Result(ctx)
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return ""
	}
	msg, why := ErrorBody(re)
	if why != "" {
		msg += ": " + why
	}
	return msg
}
