package itest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

// LocalDeletes returns the instance IDs a request to the simulated cloud's
// local face deletes, and whether it is such a request (POST
// .../deleteInstances), for HTTP transports that spy on a manager's cloud
// calls. The request's body is left readable for the round trip.
func LocalDeletes(req *http.Request) (ids []string, ok bool, err error) {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/deleteInstances") {
		return nil, false, nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, true, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	var r localapi.DeleteInstancesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, true, err
	}
	return r.IDs, true, nil
}
