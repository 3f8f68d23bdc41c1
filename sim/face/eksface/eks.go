package eksface

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// EKSFaceName is the name of the EKS face: its path prefix on the Server's
// listener and the Face of its request counters. Its node groups' instances
// live in Auto Scaling groups of the AWS face (awsface.AWSFaceName).
const EKSFaceName = "eks"

// Defaults of the simulated EKS.
const (
	// EKSDefaultVersion is the Kubernetes version of a cluster created
	// without one, and of a node group of a cluster that names none.
	EKSDefaultVersion = "1.31"
	// EKSReleaseDate is the date of every AMI release the simulated EKS
	// publishes: the release version of Kubernetes 1.x is 1.x.0-<date>.
	EKSReleaseDate = "20261101"
	// EKSDefaultPodEvictionTimeout is how long an update with force false
	// waits for a drain a PodDisruptionBudget blocks before it fails with
	// PodEvictionFailure (EKS's 15 minutes).
	EKSDefaultPodEvictionTimeout = 15 * time.Minute
	// EKSDefaultNodeCreationTimeout is how long a new node group's nodes
	// may take to join before it is CREATE_FAILED.
	EKSDefaultNodeCreationTimeout = 20 * time.Minute
	// EKSDefaultClusterName is the EKS cluster `mpool up` registers for its
	// own API server (examples/eks/cluster.yaml names it).
	EKSDefaultClusterName = "mpool-eks"
)

// Labels the simulated EKS (like EKS) sets on its nodes.
const (
	EKSLabelNodegroup      = "eks.amazonaws.com/nodegroup"
	EKSLabelCapacityType   = "eks.amazonaws.com/capacityType"
	EKSLabelNodegroupImage = "eks.amazonaws.com/nodegroup-image"
)

// Tags of a node group's instances the simulated EKS sets.
const (
	// EKSTagClusterName and EKSTagNodegroupName are EKS's own instance tags.
	EKSTagClusterName   = "eks:cluster-name"
	EKSTagNodegroupName = "eks:nodegroup-name"
	// EKSTagRelease is the release an instance was launched from:
	// "<version>/<releaseVersion>/<launch template id>:<version>" (the
	// template part empty without one).
	EKSTagRelease = "mpool.dev/eks-release"
)

// Operation names of the EKS face, as counted in Stats: eks.<Action>.
const (
	OpEKSCreateCluster          = "eks.CreateCluster"
	OpEKSDescribeCluster        = "eks.DescribeCluster"
	OpEKSListClusters           = "eks.ListClusters"
	OpEKSCreateNodegroup        = "eks.CreateNodegroup"
	OpEKSDescribeNodegroup      = "eks.DescribeNodegroup"
	OpEKSListNodegroups         = "eks.ListNodegroups"
	OpEKSDeleteNodegroup        = "eks.DeleteNodegroup"
	OpEKSUpdateNodegroupConfig  = "eks.UpdateNodegroupConfig"
	OpEKSUpdateNodegroupVersion = "eks.UpdateNodegroupVersion"
	OpEKSDescribeUpdate         = "eks.DescribeUpdate"
	OpEKSListUpdates            = "eks.ListUpdates"
	OpEKSTagResource            = "eks.TagResource"
	OpEKSUntagResource          = "eks.UntagResource"
	OpEKSListTagsForResource    = "eks.ListTagsForResource"
	OpEKSUnknown                = "eks.Unknown"
)

// EKS's error codes (the X-Amzn-ErrorType of its REST-JSON errors).
const (
	EKSCodeResourceNotFound      = "ResourceNotFoundException"
	EKSCodeResourceInUse         = "ResourceInUseException"
	EKSCodeInvalidParameter      = "InvalidParameterException"
	EKSCodeInvalidRequest        = "InvalidRequestException"
	EKSCodeResourceLimitExceeded = "ResourceLimitExceededException"
	EKSCodeServer                = "ServerException"
	EKSCodeServiceUnavailable    = "ServiceUnavailableException"
	EKSCodeThrottling            = "ThrottlingException"
	EKSCodeUnrecognizedClient    = "UnrecognizedClientException"
	EKSCodeInvalidSignature      = "InvalidSignatureException"
	EKSCodeMissingAuthToken      = "MissingAuthenticationTokenException"
	EKSCodeNotFound              = "NotFoundException"
)

// EKSFace is the simulated Amazon EKS: clusters (whose endpoint and CA are
// the workload API server the node agent joins, Options.NodeAgent) and
// their managed node groups, over EKS's REST-JSON protocol with Signature
// Version 4 (service "eks"), with the AWS face's access keys, accounts and
// regions. It is served on a listener of its own, like the AWS face.
//
// A node group's instances are those of an Auto Scaling group of the AWS
// face (eks-<nodegroup>-<uuid>): DescribeAutoScalingGroups and
// DescribeInstances show them, with EKS's instance tags and providerIDs
// aws:///<zone>/<id>. They are bootstrapped by EKS, not by Cluster API: the
// face writes their cloud-init itself (a kubeadm join with a bootstrap token
// it creates in the workload cluster), with EKS's node labels
// (eks.amazonaws.com/nodegroup, capacityType, nodegroup-image) and the node
// group's labels and taints. The node group's tags are propagated to its
// instances (mpool.dev/model-hash among them; EKS itself leaves instance
// tags to the launch template).
//
// EKS runs a node group's updates itself: a version update surges new
// nodes and cordons, drains (through the eviction API) and terminates old
// ones, at most updateConfig.maxUnavailable at a time; a scale-down drains
// the nodes it removes. A background loop advances them while any node
// group is CREATING, UPDATING or DELETING.
type EKSFace struct {
	// PodEvictionTimeout is how long a drain a PodDisruptionBudget blocks
	// may last before an update with force false fails with
	// PodEvictionFailure (default EKSDefaultPodEvictionTimeout); with force
	// the node is terminated anyway.
	PodEvictionTimeout time.Duration
	// Interval is how often the face advances its node groups (default
	// 250ms).
	Interval time.Duration
	// MaxNodegroupsPerCluster and MaxNodesPerNodegroup are EKS's quotas
	// (defaults EKSMaxNodegroupsPerCluster and EKSMaxNodesPerNodegroup):
	// beyond them CreateNodegroup and scaling fail with
	// ResourceLimitExceededException.
	MaxNodegroupsPerCluster int
	MaxNodesPerNodegroup    int32
	// NodeCreationTimeout is how long a new node group's nodes may take to
	// join before EKS gives up on it: CREATE_FAILED with the health issue
	// NodeCreationFailure naming the instances (default
	// EKSDefaultNodeCreationTimeout).
	NodeCreationTimeout time.Duration
	// NodeRepairWait is how long a node of a node group with node repair
	// enabled may be not Ready before EKS replaces it (default
	// EKSDefaultNodeRepairWait, EKS's 30 minutes; repair.go).
	NodeRepairWait time.Duration
	// Budget is the request token bucket per account and region, shared by
	// all actions (off unless set; EKSDefaultBudget is `mpool cloud
	// --eks-throttle`'s): an exhausted one answers ThrottlingException
	// (429).
	Budget core.Budget

	// buckets are Budget's buckets; like the other faces', they are not
	// persisted.
	buckets core.Buckets
	// mu serializes the changes of the face's data (handlers and the loop).
	mu      sync.Mutex
	running bool
	clients map[string]kubernetes.Interface
}

// Name implements Face.
func (*EKSFace) Name() string { return EKSFaceName }

// OwnListener implements ListenerFace: the AWS SDKs want a bare host.
func (*EKSFace) OwnListener() bool { return true }

// Describe implements FaceDescriber.
func (*EKSFace) Describe() string {
	return fmt.Sprintf("the AWS face's access keys (%s), account %s; node groups run in the AWS face's Auto Scaling groups", awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultAccountID)
}

// PrepareSandbox implements server.SandboxFace: the EKS cluster
// examples/eks names (EKSDefaultClusterName, in the AWS face's default
// account and region), whose API server is the node agent's.
func (*EKSFace) PrepareSandbox(c *core.Cloud, version string) error {
	return EKSCreateCluster(c, awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, EKSDefaultClusterName, version)
}

// InstanceIdentity implements Face. The EKS face owns no core group (its
// node groups' instances are the AWS face's), so it is never called; it
// answers as the AWS face would.
func (*EKSFace) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	return (&awsface.AWSFace{}).InstanceIdentity(in)
}

func (f *EKSFace) interval() time.Duration { return core.OrDefault(f.Interval, 250*time.Millisecond) }

func (f *EKSFace) maxNodegroups() int {
	return core.OrDefault(f.MaxNodegroupsPerCluster, EKSMaxNodegroupsPerCluster)
}

func (f *EKSFace) maxNodes() int32 {
	return core.OrDefault(f.MaxNodesPerNodegroup, EKSMaxNodesPerNodegroup)
}

func (f *EKSFace) nodeCreationTimeout() time.Duration {
	return core.OrDefault(f.NodeCreationTimeout, EKSDefaultNodeCreationTimeout)
}

func (f *EKSFace) podEvictionTimeout() time.Duration {
	return core.OrDefault(f.PodEvictionTimeout, EKSDefaultPodEvictionTimeout)
}

// eksRequest is an authenticated EKS request, carried in eksHandler calls.
type eksRequest struct {
	id              string
	body            []byte
	account, region string
	// path are the unescaped path segments after the base path.
	path  []string
	query url.Values
}

// eksHandler holds the EKS face's operations.
type eksHandler struct {
	face *EKSFace
	env  core.FaceEnv
}

type eksRequestKey struct{}

// Handler implements Face: a REST request is routed by its method and
// path.
func (f *EKSFace) Handler(env core.FaceEnv) http.Handler {
	h := &eksHandler{face: f, env: env}
	ops := map[string]http.HandlerFunc{}
	for op, fn := range map[string]func(http.ResponseWriter, *http.Request, *eksRequest){
		OpEKSCreateCluster:          h.createCluster,
		OpEKSDescribeCluster:        h.describeCluster,
		OpEKSListClusters:           h.listClusters,
		OpEKSCreateNodegroup:        h.createNodegroup,
		OpEKSDescribeNodegroup:      h.describeNodegroup,
		OpEKSListNodegroups:         h.listNodegroups,
		OpEKSDeleteNodegroup:        h.deleteNodegroup,
		OpEKSUpdateNodegroupConfig:  h.updateNodegroupConfig,
		OpEKSUpdateNodegroupVersion: h.updateNodegroupVersion,
		OpEKSDescribeUpdate:         h.describeUpdate,
		OpEKSListUpdates:            h.listUpdates,
		OpEKSTagResource:            h.tagResource,
		OpEKSUntagResource:          h.untagResource,
		OpEKSListTagsForResource:    h.listTags,
		OpEKSUnknown:                h.unknown,
	} {
		ops[op] = h.authenticated(fn)
	}
	// A restarted cloud resumes the updates it had in flight.
	f.mu.Lock()
	f.kickLocked(env)
	f.mu.Unlock()
	return &core.Router{Ops: env.WrapOps(nil, ops), Unknown: OpEKSUnknown,
		Route: eksRoute}
}

// pathSegments are the request's path segments (after the base path),
// unescaped.
func pathSegments(r *http.Request) []string {
	var segs []string
	for _, s := range strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			u = s
		}
		segs = append(segs, u)
	}
	return segs
}

// eksRoute names the operation of r by its method and unescaped path.
func eksRoute(r *http.Request) string { return eksRoutes.Match(r, pathSegments(r)) }

// eksRoutes are the face's operations, by method and path (its segments
// unescaped, matched case-sensitively).
var eksRoutes = core.RouteTable{Routes: []core.Route{
	{Path: "clusters", Ops: map[string]string{http.MethodGet: OpEKSListClusters, http.MethodPost: OpEKSCreateCluster}},
	core.GetRoute("clusters/{name}", OpEKSDescribeCluster),
	{Path: "clusters/{name}/node-groups", Ops: map[string]string{http.MethodGet: OpEKSListNodegroups, http.MethodPost: OpEKSCreateNodegroup}},
	{Path: nodegroupPath, Ops: map[string]string{http.MethodGet: OpEKSDescribeNodegroup, http.MethodDelete: OpEKSDeleteNodegroup}},
	core.PostRoute(nodegroupPath+"/update-config", OpEKSUpdateNodegroupConfig),
	core.PostRoute(nodegroupPath+"/update-version", OpEKSUpdateNodegroupVersion),
	core.GetRoute("clusters/{name}/updates", OpEKSListUpdates),
	core.GetRoute("clusters/{name}/updates/{updateId}", OpEKSDescribeUpdate),
	{Path: "tags/{resourceArn...}", Ops: map[string]string{http.MethodGet: OpEKSListTagsForResource, http.MethodPost: OpEKSTagResource,
		http.MethodDelete: OpEKSUntagResource}},
}}

// nodegroupPath is a node group's path.
const nodegroupPath = "clusters/{name}/node-groups/{nodegroupName}"

// authenticated parses the request, verifies its SigV4 signature with the
// AWS face's access keys and runs fn.
func (h *eksHandler) authenticated(fn func(http.ResponseWriter, *http.Request, *eksRequest)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req := &eksRequest{id: awsface.NewRequestID(), query: r.URL.Query(), path: pathSegments(r)}
		body, err := io.ReadAll(io.LimitReader(r.Body, admin.MaxBody))
		if err != nil {
			writeEKSError(w, req, http.StatusBadRequest, EKSCodeInvalidRequest, "The request body could not be read.")
			return
		}
		req.body = body
		if !h.authenticate(w, r, req) || !h.throttle(w, req) {
			return
		}
		fn(w, r, req)
	}
}

// authenticate verifies the request's Signature Version 4 as the AWS face
// does, with its keys and clock skew, answering EKS's errors.
func (h *eksHandler) authenticate(w http.ResponseWriter, r *http.Request, req *eksRequest) bool {
	s, aerr := awsface.AWSFaceOf(h.env.Cloud).VerifySigV4(h.env.Cloud, r, req.body, "eks")
	if aerr == nil {
		req.account, req.region = s.Account, s.Region
		return true
	}
	code, msg := map[awsface.AuthReason]string{
		awsface.AuthMissing: EKSCodeMissingAuthToken, awsface.AuthMalformed: EKSCodeInvalidSignature, awsface.AuthUnknownKey: EKSCodeUnrecognizedClient,
		awsface.AuthBadDate: EKSCodeInvalidSignature, awsface.AuthExpired: EKSCodeInvalidSignature, awsface.AuthMismatch: EKSCodeInvalidSignature,
	}[aerr.Reason], aerr.Message
	if aerr.Reason == awsface.AuthExpired {
		msg = "Signature expired: " + aerr.AmzDate + " is now earlier or later than the allowed skew of " + aerr.Now.Format(awsface.AWSAmzDateFormat)
	}
	writeEKSError(w, req, http.StatusForbidden, code, msg)
	return false
}

func (h *eksHandler) unknown(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	writeEKSError(w, req, http.StatusNotFound, EKSCodeNotFound, "The simulated EKS does not serve this operation: /"+strings.Join(req.path, "/"))
}

// eksError is an error in EKS's shape.
type eksError struct {
	status        int
	code, message string
}

func (e *eksError) Error() string { return e.code + ": " + e.message }

func eksInvalid(format string, args ...any) *eksError {
	return &eksError{status: http.StatusBadRequest, code: EKSCodeInvalidParameter, message: fmt.Sprintf(format, args...)}
}

func eksNotFound(format string, args ...any) *eksError {
	return &eksError{status: http.StatusNotFound, code: EKSCodeResourceNotFound, message: fmt.Sprintf(format, args...)}
}

func eksInUse(format string, args ...any) *eksError {
	return &eksError{status: http.StatusConflict, code: EKSCodeResourceInUse, message: fmt.Sprintf(format, args...)}
}

// writeErr answers err: an *eksError as it is, the core's errors mapped.
func (h *eksHandler) writeErr(w http.ResponseWriter, req *eksRequest, err error) {
	if e, ok := err.(*eksError); ok {
		writeEKSError(w, req, e.status, e.code, e.message)
		return
	}
	switch core.CodeOf(err) {
	case core.CodeNotFound:
		writeEKSError(w, req, http.StatusNotFound, EKSCodeResourceNotFound, err.(*core.Error).Message)
	case core.CodeInvalid:
		writeEKSError(w, req, http.StatusBadRequest, EKSCodeInvalidParameter, err.(*core.Error).Message)
	case core.CodeQuotaExceeded:
		writeEKSError(w, req, http.StatusBadRequest, EKSCodeResourceLimitExceeded, err.(*core.Error).Message)
	case core.CodeConflict:
		writeEKSError(w, req, http.StatusConflict, EKSCodeResourceInUse, err.(*core.Error).Message)
	default:
		writeEKSError(w, req, http.StatusInternalServerError, EKSCodeServer, err.Error())
	}
}

func writeEKSError(w http.ResponseWriter, req *eksRequest, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.Header().Set("x-amzn-RequestId", req.id)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": message})
}

func writeEKSResult(w http.ResponseWriter, req *eksRequest, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeEKSError(w, req, http.StatusInternalServerError, EKSCodeServer, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-RequestId", req.id)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// WriteFault implements Face: ThrottlingException (429) and ServerException
// (500) or ServiceUnavailableException (503), as EKS answers them.
func (*EKSFace) WriteFault(w http.ResponseWriter, _ *http.Request, f core.Fault) {
	req := &eksRequest{id: awsface.NewRequestID()}
	switch {
	case f.Kind == core.FaultThrottle:
		writeEKSError(w, req, http.StatusTooManyRequests, EKSCodeThrottling, "Rate exceeded ("+f.Message+")")
	case f.Status == http.StatusServiceUnavailable:
		writeEKSError(w, req, f.Status, EKSCodeServiceUnavailable, "Service is unavailable. ("+f.Message+")")
	default:
		writeEKSError(w, req, http.StatusInternalServerError, EKSCodeServer, "An internal failure occurred. ("+f.Message+")")
	}
}

// eksTime is a timestamp as REST-JSON sends it: epoch seconds.
type eksTime time.Time

// MarshalJSON implements json.Marshaler.
func (t eksTime) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%.3f", float64(time.Time(t).UnixMilli())/1000)), nil
}
