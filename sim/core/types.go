package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Model is what the cloud creates instances from.
type Model struct {
	// InstanceType is the simulated VM size; the Node's
	// node.kubernetes.io/instance-type label.
	InstanceType string `json:"instanceType,omitempty"`
	// Image is the OS image; the Node's osImage.
	Image string `json:"image,omitempty"`
	// Zones are spread across, balanced.
	Zones []string `json:"zones,omitempty"`
	// CustomData is the bootstrap data (cloud-init) instances run at boot.
	CustomData []byte `json:"customData,omitempty"`
	// Tags are carried as-is.
	Tags map[string]string `json:"tags,omitempty"`
	// Extra holds the fields the node agent reads: ExtraVersion,
	// ExtraCPU, ExtraMemory. Others are carried as-is.
	Extra map[string]string `json:"extra,omitempty"`
}

// Keys of Model.Extra that the simulated VMs read.
const (
	// ExtraVersion is the kubelet version a simulated Node reports
	// (default DefaultKubeletVersion).
	ExtraVersion = "version"
	// ExtraCPU is the Node's CPU capacity (default "2").
	ExtraCPU = "cpu"
	// ExtraMemory is the Node's memory capacity (default "8Gi").
	ExtraMemory = "memory"
)

// Simulation are the knobs of a group's simulated instances.
type Simulation struct {
	// ProvisionDelay is how long an instance stays Creating before it boots.
	ProvisionDelay time.Duration `json:"provisionDelay"`
	// BootDelay is how long an instance boots before it is Running.
	BootDelay time.Duration `json:"bootDelay"`
	// BootJitter is the maximum random deviation (±) from BootDelay; the
	// result is never negative.
	BootJitter time.Duration `json:"bootJitter"`
	// DeleteDelay is how long an instance stays Deleting before it is gone.
	DeleteDelay time.Duration `json:"deleteDelay"`
	// FailureRate is the probability in [0, 1] that an instance fails to boot.
	FailureRate float64 `json:"failureRate"`
}

// DefaultSimulation is used for groups that set no knobs when the cloud's
// Options do not say otherwise: boot in 2s ± 1s, never fail.
func DefaultSimulation() Simulation {
	return Simulation{BootDelay: 2 * time.Second, BootJitter: time.Second}
}

// SimulationPatch changes some simulation knobs; nil fields stay.
type SimulationPatch struct {
	ProvisionDelay *time.Duration
	BootDelay      *time.Duration
	BootJitter     *time.Duration
	DeleteDelay    *time.Duration
	FailureRate    *float64
}

// apply returns s with p's fields applied.
func (s Simulation) apply(p *SimulationPatch) Simulation {
	if p == nil {
		return s
	}
	set := func(dst *time.Duration, v *time.Duration) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.ProvisionDelay, p.ProvisionDelay)
	set(&s.BootDelay, p.BootDelay)
	set(&s.BootJitter, p.BootJitter)
	set(&s.DeleteDelay, p.DeleteDelay)
	if p.FailureRate != nil {
		s.FailureRate = *p.FailureRate
	}
	return s
}

func (s Simulation) validate() error {
	if s.ProvisionDelay < 0 || s.BootDelay < 0 || s.BootJitter < 0 || s.DeleteDelay < 0 {
		return Invalidf("simulation delays must not be negative")
	}
	if s.FailureRate < 0 || s.FailureRate > 1 {
		return Invalidf("failureRate must be within [0, 1], got %v", s.FailureRate)
	}
	return nil
}

// GroupSpec is the desired state of a group.
type GroupSpec struct {
	// Capacity is the desired number of instances (not counting deleting
	// ones).
	Capacity int32
	// ModelHash is the caller's identifier of Model, stamped on the
	// instances created from it.
	ModelHash string
	// Model is what new instances are created from.
	Model Model
	// Simulation optionally changes the group's knobs.
	Simulation *SimulationPatch
	// Payload is the face's opaque data about the group (valid JSON): nil
	// keeps the group's payload, anything else replaces it (empty clears
	// it). See also Scope.UpdateGroupPayload.
	Payload json.RawMessage
}

// InstanceState is an instance's lifecycle state.
type InstanceState string

// Instance states.
const (
	StateCreating InstanceState = "Creating"
	StateBooting  InstanceState = "Booting"
	StateRunning  InstanceState = "Running"
	StateFailed   InstanceState = "Failed"
	StateDeleting InstanceState = "Deleting"
)

// JoinPhase is the node agent's progress for a running instance.
type JoinPhase string

// Join phases.
const (
	// JoinNone: the instance has not booted, or the node agent is off.
	JoinNone JoinPhase = ""
	// JoinJoining: the node agent is joining (or retrying).
	JoinJoining JoinPhase = "Joining"
	// JoinJoined: the Node is registered and heartbeating.
	JoinJoined JoinPhase = "Joined"
	// JoinFailed: the instance will never join; Message says why.
	JoinFailed JoinPhase = "JoinFailed"
)

// Group is a snapshot of a scale group.
type Group struct {
	// Face, Scope and Name are the group's key (GroupKey).
	Face      string
	Scope     string
	Name      string
	Capacity  int32
	ModelHash string
	// Model is the current model. Snapshots returned by the Cloud leave
	// CustomData out.
	Model      Model
	Simulation Simulation
	CreatedAt  time.Time
	// Operation is the long-running change in progress, if any.
	Operation *Operation
	// Instances are in creation order.
	Instances []Instance
	// Faults are the group's armed instance-level faults.
	Faults GroupFaults
	// Payload is the face's opaque data about the group (a copy).
	Payload json.RawMessage
}

// Key returns the group's key.
func (g *Group) Key() GroupKey { return GroupKey{Face: g.Face, Scope: g.Scope, Name: g.Name} }

// Live returns the group's instances that are not being deleted, in
// creation order; nil for a nil group.
func (g *Group) Live() []Instance {
	if g == nil {
		return nil
	}
	var out []Instance
	for _, in := range g.Instances {
		if in.State != StateDeleting {
			out = append(out, in)
		}
	}
	return out
}

// GroupFaults are instance-level faults of one group, armed through
// SetGroupFaults (the admin endpoint PUT /admin/groups/{name}/faults). Unlike
// the wire-level Faults they change what the simulated VMs do.
type GroupFaults struct {
	// WrongTokens is how many of the instances the group creates next boot
	// with a wrong bootstrap token, as a VM whose custom data carries a
	// stale or mistyped token would: the node agent's token discovery is
	// refused by the API server (401) and the instance never joins, its
	// Message says why. It counts down as instances are created.
	WrongTokens int `json:"wrongTokens"`
	// NeverJoins is how many of the instances the group creates next are
	// created with the fault FaultNeverJoins. It counts down as instances
	// are created.
	NeverJoins int `json:"neverJoins,omitempty"`
}

// Operation is a long-running change of a group: instances being created or
// deleted, or the group being deleted.
type Operation struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	StartedAt time.Time `json:"startedAt"`
	Message   string    `json:"message,omitempty"`
}

// Operation types.
const (
	OperationScale  = "Scale"
	OperationDelete = "Delete"
)

// Instance is a snapshot of one instance.
type Instance struct {
	ID string
	// ProviderID, Hostname and Metadata are what the group's face chose when
	// the instance was created (Face.InstanceIdentity).
	ProviderID string
	Hostname   string
	PrivateIP  string
	Zone       string
	State      InstanceState
	CreatedAt  time.Time
	ModelHash  string
	// Message says why the instance failed or has not joined.
	Message  string
	Join     JoinPhase
	NodeName string
	// WrongToken is set when the instance booted with a wrong bootstrap
	// token (GroupFaults.WrongTokens).
	WrongToken bool
	// Held is set while the instance waits Creating for its face to release
	// it (InstanceIdentity.Hold, Scope.ReleaseInstance).
	Held bool
	// Fault is the instance's health fault (SetInstanceFault), FaultNone
	// when healthy, and FaultSince when it was set.
	Fault      InstanceFault
	FaultSince time.Time
	// Metadata is the instance data cloud-init exposes as ds.meta_data
	// (local_hostname, instance_id, ...). It is shared with the core and
	// every snapshot: read it, never change it.
	Metadata map[string]string
	// Payload is the face's opaque data about the instance (a copy).
	Payload json.RawMessage
}

// ErrorCode classifies errors of the Cloud's API.
type ErrorCode string

// Error codes.
const (
	CodeNotFound      ErrorCode = "NotFound"
	CodeInvalid       ErrorCode = "InvalidParameter"
	CodeQuotaExceeded ErrorCode = "QuotaExceeded"
	CodeConflict      ErrorCode = "Conflict"
)

// Error is an error of the Cloud's API; faces map Code onto their wire
// protocol.
type Error struct {
	Code    ErrorCode
	Message string
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// CodeOf returns err's code, or "" when it is not an *Error.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// NotFound is the Error of CodeNotFound for the group k.
func NotFound(k GroupKey) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf("scale group %q not found", k.String())}
}

// Invalidf is an Error of CodeInvalid.
func Invalidf(format string, args ...any) error {
	return &Error{Code: CodeInvalid, Message: fmt.Sprintf(format, args...)}
}
