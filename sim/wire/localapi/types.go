// Package localapi holds the wire types of the simulated cloud's simple JSON
// face (REST over HTTP): the request and response bodies of /v1/groups and the
// admin endpoints. It is the "SDK" the local provider speaks; it has no logic
// and no dependency on the simulated cloud's core.
//
// Endpoints (all bodies JSON):
//
//	GET    /v1/groups                          → GroupList
//	GET    /v1/groups/{name}                   → Group                (404 when absent)
//	PUT    /v1/groups/{name}          GroupSpec → Group                (create or update)
//	POST   /v1/groups/{name}/deleteInstances DeleteInstancesRequest → Group (404 when absent)
//	DELETE /v1/groups/{name}                   → 202 Group, 404 when absent
//	GET    /admin/stats                        → Stats
//	DELETE /admin/stats                        (reset the counters)
//	GET|PUT /admin/faults             Faults (?face=<name>: that face's own)
//	DELETE /admin/faults?face=<name>   (the face follows the cloud-wide faults again)
//	GET|PUT /admin/simulation         Simulation (defaults for new groups)
//	PUT    /admin/groups/{name}/simulation Simulation (one group)
//	PUT    /admin/groups/{name}/capacity Capacity → Group (an external autoscaler scales the group)
//	PUT    /admin/groups/{name}/faults  GroupFaults → Group (instance-level faults)
//	PUT|DELETE /admin/instances/{id}/fault InstanceFault → InstanceFault (an instance's health fault, by ID or providerID)
//	PUT|DELETE /admin/groups/{name}/instances/{id}/fault InstanceFault → Group (the same within one group)
//	PUT    /admin/groups/{name}/instance-faults GroupInstanceFault → GroupInstanceFaultResult (a fraction of the group's instances)
//	GET|PUT /admin/quota              Quota
//	GET    /healthz
//
// The /admin/groups endpoints act on the local face's groups; the query
// parameters face and scope select another face's group (e.g.
// ?face=azure&scope=/subscriptions/s/resourceGroups/rg); they answer with
// this package's Group whatever the face.
//
// Errors are returned as ErrorResponse with a status code: 400 InvalidParameter,
// 404 NotFound, 409 QuotaExceeded or Conflict, 429 TooManyRequests (with a
// Retry-After header in seconds), 5xx InternalServerError/ServiceUnavailable.
package localapi

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Error codes.
const (
	CodeInvalidParameter = "InvalidParameter"
	CodeNotFound         = "NotFound"
	CodeQuotaExceeded    = "QuotaExceeded"
	CodeConflict         = "Conflict"
	CodeTooManyRequests  = "TooManyRequests"
	CodeInternal         = "InternalServerError"
	CodeUnavailable      = "ServiceUnavailable"
)

// GroupSpec is the body of PUT /v1/groups/{name}.
type GroupSpec struct {
	// Capacity is the desired number of instances.
	Capacity int32 `json:"capacity"`
	// ModelHash is the caller's hash of Model; stamped on new instances.
	ModelHash string `json:"modelHash,omitempty"`
	// Model is what new instances are created from.
	Model Model `json:"model"`
	// Simulation optionally changes the group's simulation knobs; fields
	// left out keep their value.
	Simulation *Simulation `json:"simulation,omitempty"`
}

// Model is an instance model.
type Model struct {
	InstanceType string            `json:"instanceType,omitempty"`
	Image        string            `json:"image,omitempty"`
	Zones        []string          `json:"zones,omitempty"`
	CustomData   []byte            `json:"customData,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	Extra        map[string]string `json:"extra,omitempty"`
}

// Simulation are the knobs of a group's simulated instances. Nil fields are
// "unchanged" in requests.
type Simulation struct {
	// ProvisionDelay is how long an instance stays Creating.
	ProvisionDelay *metav1.Duration `json:"provisionDelay,omitempty"`
	// BootDelay is how long an instance boots before it is Running.
	BootDelay *metav1.Duration `json:"bootDelay,omitempty"`
	// BootJitter is the maximum random deviation (±) from BootDelay.
	BootJitter *metav1.Duration `json:"bootJitter,omitempty"`
	// DeleteDelay is how long an instance stays Deleting.
	DeleteDelay *metav1.Duration `json:"deleteDelay,omitempty"`
	// FailureRate is the probability in [0, 1] that an instance fails to boot.
	FailureRate *float64 `json:"failureRate,omitempty"`
}

// Group is a scale group with its instances.
type Group struct {
	Name      string    `json:"name"`
	Capacity  int32     `json:"capacity"`
	ModelHash string    `json:"modelHash,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// Model is the current model without its custom data.
	Model      Model      `json:"model"`
	Simulation Simulation `json:"simulation"`
	Operation  *Operation `json:"operation,omitempty"`
	Instances  []Instance `json:"instances"`
}

// Operation is a long-running change in progress.
type Operation struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	StartedAt time.Time `json:"startedAt"`
	Message   string    `json:"message,omitempty"`
}

// Instance is one instance of a group.
type Instance struct {
	ID         string    `json:"id"`
	ProviderID string    `json:"providerID"`
	Hostname   string    `json:"hostname"`
	PrivateIP  string    `json:"privateIP"`
	Zone       string    `json:"zone,omitempty"`
	State      string    `json:"state"`
	CreatedAt  time.Time `json:"createdAt"`
	ModelHash  string    `json:"modelHash,omitempty"`
	Message    string    `json:"message,omitempty"`
	// Join is the node agent's progress: "", Joining, Joined or JoinFailed.
	Join     string `json:"join,omitempty"`
	NodeName string `json:"nodeName,omitempty"`
	// Fault is the instance's health fault (InstanceFault), empty when
	// healthy.
	Fault string `json:"fault,omitempty"`
}

// Instance states.
const (
	StateCreating = "Creating"
	StateBooting  = "Booting"
	StateRunning  = "Running"
	StateFailed   = "Failed"
	StateDeleting = "Deleting"
)

// GroupList is the body of GET /v1/groups.
type GroupList struct {
	Groups []string `json:"groups"`
}

// DeleteInstancesRequest is the body of POST /v1/groups/{name}/deleteInstances.
type DeleteInstancesRequest struct {
	IDs []string `json:"ids"`
}

// ErrorResponse is the body of every error response.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody describes an error.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Faults are the fault injection switches. Rates are probabilities in [0, 1].
type Faults struct {
	// ThrottleRate is the share of requests answered 429 with Retry-After.
	ThrottleRate float64 `json:"throttleRate"`
	// RetryAfter is the Retry-After of throttled responses (rounded up to
	// whole seconds on the wire; default 1s).
	RetryAfter metav1.Duration `json:"retryAfter"`
	// ErrorRate is the share of requests answered with a 5xx.
	ErrorRate float64 `json:"errorRate"`
	// Latency is added to every request.
	Latency metav1.Duration `json:"latency"`
}

// Stats are the request counters, by operation and status code.
type Stats struct {
	Requests []RequestCount `json:"requests"`
}

// RequestCount is the number of requests of one operation answered with one
// status code.
type RequestCount struct {
	// Face is the name of the face that served the requests ("local" for
	// this API).
	Face      string `json:"face,omitempty"`
	Operation string `json:"operation"`
	Status    int    `json:"status"`
	Count     int64  `json:"count"`
}

// Quota limits the simulated cloud's resources.
type Quota struct {
	// MaxInstances is the most instances (not deleting) the cloud runs across
	// all groups; 0 means unlimited.
	MaxInstances int `json:"maxInstances"`
}

// Capacity is the body of PUT /admin/groups/{name}/capacity: the capacity an
// actor other than the group's API client (the cloud's own autoscaler, an
// operator) sets, keeping the group's model.
type Capacity struct {
	Capacity int32 `json:"capacity"`
}

// GroupFaults is the body of PUT /admin/groups/{name}/faults: instance-level
// faults of one group.
type GroupFaults struct {
	// WrongTokens is how many of the instances the group creates next boot
	// with a wrong bootstrap token and therefore never join (their message
	// says why).
	WrongTokens int `json:"wrongTokens"`
	// NeverJoins is how many of the instances the group creates next have
	// the fault NeverJoins: they run but never join.
	NeverJoins int `json:"neverJoins,omitempty"`
}

// Instance health faults (InstanceFault.Fault): what goes wrong inside a
// running instance.
const (
	// FaultKubeletStopped: the kubelet stops heartbeating; the Node goes
	// Unknown after the node monitor grace period.
	FaultKubeletStopped = "KubeletStopped"
	// FaultNodeNotReady: the kubelet heartbeats but reports Ready=False
	// (KubeletNotReady).
	FaultNodeNotReady = "NodeNotReady"
	// FaultNeverJoins: the instance runs but never joins (no Node).
	FaultNeverJoins = "NeverJoins"
	// FaultCloudCheckFailing: the instance fails the cloud's own status
	// check (EC2 instance status, Azure application health); its kubelet is
	// unaffected.
	FaultCloudCheckFailing = "CloudCheckFailing"
)

// InstanceFault is the body of PUT /admin/instances/{id}/fault and
// PUT /admin/groups/{name}/instances/{id}/fault: an instance's health
// fault, empty (or DELETE) to clear it.
type InstanceFault struct {
	Fault string `json:"fault"`
}

// GroupInstanceFault is the body of PUT /admin/groups/{name}/instance-faults:
// Fault for a Fraction in [0, 1] of the group's live instances, chosen at
// random (seeded) among those without it; an empty Fault clears that many.
type GroupInstanceFault struct {
	Fraction float64 `json:"fraction"`
	Fault    string  `json:"fault"`
}

// GroupInstanceFaultResult is the answer of PUT
// /admin/groups/{name}/instance-faults: the instances chosen.
type GroupInstanceFaultResult struct {
	InstanceIDs []string `json:"instanceIds"`
}
