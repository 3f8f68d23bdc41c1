package eksface

import (
	"net/http"
	"testing"

	"github.com/mpool-dev/mpool/sim/core/coretest"
)

// TestEKSRoute: the face's route table names each operation by method and
// path (its segments unescaped, matched case-sensitively); a tagged
// resource's ARN is the rest of the path.
func TestEKSRoute(t *testing.T) {
	const ng = "/clusters/C/node-groups/N"
	tests := []struct {
		method, path, want string
		values             map[string]string
	}{
		{http.MethodPost, "/clusters", OpEKSCreateCluster, nil},
		{http.MethodGet, "/clusters/C", OpEKSDescribeCluster, map[string]string{"name": "C"}},
		{http.MethodDelete, "/clusters/C", "", nil},
		{http.MethodGet, "/Clusters/C", "", nil},
		{http.MethodPost, "/clusters/C/node-groups", OpEKSCreateNodegroup, map[string]string{"name": "C"}},
		{http.MethodDelete, ng, OpEKSDeleteNodegroup, map[string]string{"name": "C", "nodegroupName": "N"}},
		{http.MethodPost, ng + "/update-version", OpEKSUpdateNodegroupVersion, map[string]string{"nodegroupName": "N"}},
		{http.MethodGet, ng + "/update-version", "", nil},
		{http.MethodGet, "/clusters/C/updates/U", OpEKSDescribeUpdate, map[string]string{"updateId": "U"}},
		{http.MethodPost, "/tags/arn%3Aaws%3Aeks%3Aus-east-1%3A1%3Anodegroup%2FC%2FN%2Fx", OpEKSTagResource,
			map[string]string{"resourceArn": "arn:aws:eks:us-east-1:1:nodegroup/C/N/x"}},
		{http.MethodGet, "/tags", "", nil},
	}
	for _, tt := range tests {
		coretest.CheckRoute(t, eksRoute, tt.method, tt.path, tt.want, tt.values)
	}
}
