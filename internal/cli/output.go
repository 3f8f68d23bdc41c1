package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The structured views below are what `-o json` and `-o yaml` print. They
// are a stable, documented summary made for scripts, not the raw objects:
// fields are only added, never renamed or removed. Times are RFC 3339.

// MachinePoolView is the view of `mpool describe machinepool NAME`.
type MachinePoolView struct {
	// Namespace and Name of the MachinePool.
	Namespace string `json:"namespace"`
	// Name of the MachinePool.
	Name string `json:"name"`
	// Cluster is spec.clusterName.
	Cluster string `json:"cluster"`
	// Phase is status.phase (Pending, Provisioning, Running, ScalingUp, ...).
	Phase string `json:"phase,omitempty"`
	// Version is the Kubernetes version of the pool's instances.
	Version string `json:"version,omitempty"`
	// RolloutPaused is true when the mpool.dev/rollout-paused annotation is "true".
	RolloutPaused bool `json:"rolloutPaused"`
	// Replicas are the pool's replica counts.
	Replicas ReplicaCounts `json:"replicas"`
	// Created is the MachinePool's creation time.
	Created metav1.Time `json:"created"`
	// Conditions are the MachinePool's conditions that need attention (see
	// ConditionView).
	Conditions []ConditionView `json:"conditions,omitempty"`
	// Bootstrap is the bootstrap config of the pool, nil when it has none.
	Bootstrap *BootstrapView `json:"bootstrap,omitempty"`
	// Infrastructure is the infrastructure pool.
	Infrastructure *InfraPoolView `json:"infrastructure,omitempty"`
	// Notes say what could not be read (for example the workload cluster's
	// Nodes), so that an absent value is not mistaken for a missing object.
	Notes []string `json:"notes,omitempty"`
}

// ReplicaCounts are a pool's replica counts, in the meaning of Cluster API
// v1beta2's MachinePool status; a count the MachinePool does not report
// yet is 0.
type ReplicaCounts struct {
	// Desired is spec.replicas.
	Desired int32 `json:"desired"`
	// Current is status.replicas: the instances the infrastructure reports.
	Current int32 `json:"current"`
	// Ready is status.readyReplicas: replicas whose Machine is Ready (its
	// Node is Ready).
	Ready int32 `json:"ready"`
	// Available is status.availableReplicas: replicas whose Machine is
	// Available (Ready for at least minReadySeconds).
	Available int32 `json:"available"`
	// UpToDate is status.upToDateReplicas: replicas that run the pool's
	// current model. Until the MachinePool reports it, it is the number of
	// live instances whose per-instance object reports
	// status.latestModelApplied.
	UpToDate int32 `json:"upToDate"`
}

// BootstrapView is a pool's bootstrap config.
type BootstrapView struct {
	// Kind and Name of the config (for example KubeadmConfig); empty when the
	// pool names a data Secret directly.
	Kind string `json:"kind,omitempty"`
	// Name of the config.
	Name string `json:"name,omitempty"`
	// Found is false when the config does not exist.
	Found bool `json:"found"`
	// Ready says the config's bootstrap data Secret is created:
	// status.initialization.dataSecretCreated (status.ready for a provider
	// of the v1beta1 contract).
	Ready bool `json:"ready"`
	// DataSecretName is the Secret holding the bootstrap data, once ready.
	DataSecretName string `json:"dataSecretName,omitempty"`
	// Conditions are the config's conditions that need attention.
	Conditions []ConditionView `json:"conditions,omitempty"`
}

// InfraPoolView is a pool's infrastructure pool (LocalMachinePool,
// AzureMachinePool, AWSMachinePool, ...).
type InfraPoolView struct {
	// APIVersion of the infrastructure pool: the version the controllers
	// read it at (the newest its CustomResourceDefinition's Cluster API
	// contract labels name); empty when the API server does not serve its
	// kind.
	APIVersion string `json:"apiVersion"`
	// Kind of the infrastructure pool.
	Kind string `json:"kind"`
	// Name of the infrastructure pool.
	Name string `json:"name"`
	// Found is false when the infrastructure pool does not exist.
	Found bool `json:"found"`
	// Ready is status.initialization.provisioned (status.ready for a
	// provider of the v1beta1 contract): the cloud scale group exists and is
	// usable.
	Ready bool `json:"ready"`
	// Replicas is status.replicas.
	Replicas int32 `json:"replicas"`
	// InstanceKind is status.infrastructureMachineKind, the kind of the
	// per-instance objects; empty until the provider reports it.
	InstanceKind string `json:"instanceKind,omitempty"`
	// FailureReason and FailureMessage report a terminal problem.
	FailureReason string `json:"failureReason,omitempty"`
	// FailureMessage is the human-readable terminal problem.
	FailureMessage string `json:"failureMessage,omitempty"`
	// Rollout names the pool's fields its rollout budget comes from and
	// what they mean, as its provider reads them ("spec.strategy",
	// "spec.refreshPreferences: ..."); empty when no provider of mpool
	// serves the kind.
	Rollout string `json:"rollout,omitempty"`
	// Conditions are the pool's conditions that need attention.
	Conditions []ConditionView `json:"conditions,omitempty"`
	// Instances are the pool's instances, sorted by name.
	Instances []InstanceView `json:"instances"`
}

// InstanceView is one instance of an infrastructure pool.
type InstanceView struct {
	// Name of the per-instance object (or the instance ID when the provider
	// has no per-instance objects).
	Name string `json:"name"`
	// InstanceID is the instance's ID within its scale group.
	InstanceID string `json:"instanceID,omitempty"`
	// ProviderID is the instance's providerID.
	ProviderID string `json:"providerID,omitempty"`
	// State is the instance's lifecycle state, one vocabulary for every
	// provider: Pending, Booting, Running, Failed, Deleting, or Unknown
	// before the controller first reports it (contract.InstanceState).
	State string `json:"state,omitempty"`
	// CloudState is the provider's own word for the state (Azure's
	// provisioningState Succeeded, Auto Scaling's InService, EC2's
	// running), empty when it records none.
	CloudState string `json:"cloudState,omitempty"`
	// Zone (failure domain) the instance runs in.
	Zone string `json:"zone,omitempty"`
	// UpToDate says whether the instance runs the pool's current model; nil
	// when the provider does not say.
	UpToDate *bool `json:"upToDate,omitempty"`
	// Ready is the instance's status.ready: running with a Ready Node.
	Ready bool `json:"ready"`
	// Version is the Kubernetes version of the instance's Node.
	Version string `json:"version,omitempty"`
	// Deleting is true once the instance's removal has started.
	Deleting bool `json:"deleting,omitempty"`
	// MarkedForDeletion is true when the instance carries the
	// cluster.x-k8s.io/delete-machine annotation.
	MarkedForDeletion bool `json:"markedForDeletion,omitempty"`
	// Quarantined is true when the rollout left the instance's Node
	// cordoned because it could not be drained (mpool.dev/quarantined).
	Quarantined bool `json:"quarantined,omitempty"`
	// Machine is the name of the pool Machine of the instance.
	Machine string `json:"machine,omitempty"`
	// Health is what a MachineHealthCheck found (the Machine's
	// HealthCheckSucceeded condition): Healthy, Unhealthy, or empty when no
	// check covers the instance.
	Health string `json:"health,omitempty"`
	// Remediation is the remediation of an unhealthy instance (the Machine's
	// OwnerRemediated condition): Remediating once the engine drains and
	// deletes it, Deferred while the pool's cap on remediations in flight
	// holds it back, Waiting before the engine took it up; empty otherwise.
	Remediation string `json:"remediation,omitempty"`
	// Node is the instance's Node, nil before it has joined.
	Node *NodeView `json:"node,omitempty"`
	// Created is when the per-instance object was created.
	Created *metav1.Time `json:"created,omitempty"`
	// Conditions are the instance's conditions that need attention.
	Conditions []ConditionView `json:"conditions,omitempty"`
}

// NodeView is an instance's Node in the workload cluster.
type NodeView struct {
	// Name of the Node.
	Name string `json:"name"`
	// Status is the Node's Ready condition: Ready, NotReady or Unknown;
	// NotFound when the Node does not exist; empty when the workload
	// cluster could not be read.
	Status string `json:"status,omitempty"`
	// Since is when the Node's Ready condition last changed: for a Ready
	// Node, when it became Ready.
	Since *metav1.Time `json:"since,omitempty"`
}

// ConditionView is a condition that needs attention: a condition that is
// not True, except that for the conditions where True is the abnormal
// state (Paused, ScalingUp, ScalingDown, Deleting, Remediating) it is one that is not
// False, and RolloutProgressing is shown unless the rollout has converged.
type ConditionView struct {
	// Type of the condition.
	Type string `json:"type"`
	// Status of the condition: True, False or Unknown.
	Status string `json:"status"`
	// Reason is the condition's machine-readable reason.
	Reason string `json:"reason,omitempty"`
	// Message is the condition's human-readable message.
	Message string `json:"message,omitempty"`
}

// ClusterView is the view of `mpool describe cluster NAME`.
type ClusterView struct {
	// Namespace of the Cluster.
	Namespace string `json:"namespace"`
	// Name of the Cluster.
	Name string `json:"name"`
	// Phase is status.phase.
	Phase string `json:"phase,omitempty"`
	// Paused is spec.paused.
	Paused bool `json:"paused,omitempty"`
	// ControlPlaneEndpoint is spec.controlPlaneEndpoint as host:port.
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint,omitempty"`
	// Created is the Cluster's creation time.
	Created metav1.Time `json:"created"`
	// Conditions are the Cluster's conditions that need attention.
	Conditions []ConditionView `json:"conditions,omitempty"`
	// MachinePools are the Cluster's MachinePools, sorted by name.
	MachinePools []PoolSummaryView `json:"machinePools"`
}

// PoolSummaryView is one MachinePool of a Cluster.
type PoolSummaryView struct {
	// Name of the MachinePool.
	Name string `json:"name"`
	// Phase is status.phase.
	Phase string `json:"phase,omitempty"`
	// Version is the Kubernetes version of the pool's instances.
	Version string `json:"version,omitempty"`
	// Infrastructure is the infrastructure pool as Kind/name.
	Infrastructure string `json:"infrastructure"`
	// RolloutPaused is true when the pool's rollout is paused.
	RolloutPaused bool `json:"rolloutPaused"`
	// Replicas are the pool's replica counts.
	Replicas ReplicaCounts `json:"replicas"`
	// Ready is the MachinePool's Ready condition status (True, False,
	// Unknown), empty when it has none.
	Ready string `json:"ready,omitempty"`
	// Created is the MachinePool's creation time.
	Created metav1.Time `json:"created"`
}

// RolloutStatusView is the view of `mpool rollout status NAME`.
type RolloutStatusView struct {
	// Namespace of the MachinePool.
	Namespace string `json:"namespace"`
	// Name of the MachinePool.
	Name string `json:"name"`
	// Complete is true when every desired replica runs the current model and
	// is available, nothing else is left and the controllers have observed
	// the latest spec.
	Complete bool `json:"complete"`
	// Paused is true when the rollout is paused (mpool.dev/rollout-paused).
	Paused bool `json:"paused"`
	// Stopped is why the engine stopped the rollout itself, empty when it
	// did not: RolloutBlocked (the cloud cannot create the new model),
	// ProgressDeadlineExceeded or ReplacementsFailing (it paused the
	// rollout). The old instances keep serving; Waiting says more.
	Stopped string `json:"stopped,omitempty"`
	// BlueGreen is the phase of the pool's blue-green rollout
	// (CreatingGreenPool, ..., RollingBack), empty when none is in progress.
	BlueGreen string `json:"blueGreen,omitempty"`
	// Desired is the MachinePool's spec.replicas.
	Desired int32 `json:"desired"`
	// Replicas is the number of live instances: neither failed nor deleting.
	Replicas int32 `json:"replicas"`
	// UpToDate is the number of live instances on the current model.
	UpToDate int32 `json:"upToDate"`
	// Stale is the number of live instances on an older model.
	Stale int32 `json:"stale"`
	// Ready is the number of live instances whose Node is Ready.
	Ready int32 `json:"ready"`
	// Available is the MachinePool's status.availableReplicas: instances
	// Ready for at least minReadySeconds.
	Available int32 `json:"available"`
	// Unavailable is max(0, desired - available).
	Unavailable int32 `json:"unavailable"`
	// SurgeInUse is max(0, replicas - desired): live instances above desired.
	SurgeInUse int32 `json:"surgeInUse"`
	// MaxSurge is the strategy's maxSurge resolved against desired; nil when
	// the infrastructure pool has no rolling update strategy.
	MaxSurge *int32 `json:"maxSurge,omitempty"`
	// MaxUnavailable is the strategy's maxUnavailable resolved against
	// desired; nil when the infrastructure pool has no rolling update strategy.
	MaxUnavailable *int32 `json:"maxUnavailable,omitempty"`
	// Deleting is the number of instances being drained or deleted.
	Deleting int32 `json:"deleting"`
	// Failed is the number of failed instances.
	Failed int32 `json:"failed"`
	// Quarantined is the number of instances left cordoned because their
	// Node could not be drained during the rollout (the pool's
	// undrainable-node behavior Cordon); they are not counted above.
	Quarantined int32 `json:"quarantined,omitempty"`
	// Waiting says what the rollout waits for, empty when it is complete.
	Waiting []string `json:"waiting,omitempty"`
}

// outputFormat is the value of -o: "" (text), json or yaml.
type outputFormat string

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "format" }
func (o *outputFormat) Set(v string) error {
	switch v {
	case "", "json", "yaml":
		*o = outputFormat(v)
		return nil
	}
	return fmt.Errorf("unknown output format %q: use json or yaml", v)
}

// addOutputFlag binds -o/--output to a format.
func addOutputFlag(fs *pflag.FlagSet) *outputFormat {
	o := new(outputFormat)
	fs.VarP(o, "output", "o", "Output format: json or yaml (default: human-readable text)")
	return o
}

// writeStructured writes v as JSON or YAML.
func writeStructured(w io.Writer, format outputFormat, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the output: %w", err)
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return fmt.Errorf("encoding the output: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// colorMode is the value of --color: auto, always or never.
type colorMode string

func (c *colorMode) String() string { return string(*c) }
func (c *colorMode) Type() string   { return "when" }
func (c *colorMode) Set(v string) error {
	switch v {
	case "auto", "always", "never":
		*c = colorMode(v)
		return nil
	}
	return fmt.Errorf("unknown --color value %q: use auto, always or never", v)
}

// addColorFlag binds --color.
func addColorFlag(fs *pflag.FlagSet) *colorMode {
	c := colorMode("auto")
	fs.Var(&c, "color", "Colour the output: auto (when stdout is a terminal and NO_COLOR is unset), always or never")
	return &c
}

// palette returns the palette for writing to w: colour when the mode says
// always, or auto and w is a terminal and NO_COLOR is unset.
func (c colorMode) palette(w io.Writer) palette {
	switch c {
	case "always":
		return palette{on: true}
	case "never":
		return palette{}
	}
	if os.Getenv("NO_COLOR") != "" {
		return palette{}
	}
	f, ok := w.(*os.File)
	return palette{on: ok && term.IsTerminal(int(f.Fd()))}
}

// style is how a piece of text is painted.
type style int

const (
	plain style = iota
	bold
	good
	warn
	bad
	faint
)

// palette paints text with ANSI escapes when on.
type palette struct{ on bool }

var ansi = map[style]string{
	bold:  "\x1b[1m",
	good:  "\x1b[32m",
	warn:  "\x1b[33m",
	bad:   "\x1b[31m",
	faint: "\x1b[2m",
}

func (p palette) paint(s string, st style) string {
	if !p.on || st == plain || s == "" {
		return s
	}
	return ansi[st] + s + "\x1b[0m"
}
