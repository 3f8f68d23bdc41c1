package preview

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mpool-dev/mpool/internal/rollout"
)

// Annotations of the blue-green strategy, on a MachinePool or its infra pool
// (which wins, key by key), modelled on GKE's blueGreenSettings.
const (
	// RolloutStrategyAnnotation chooses how a model change is rolled out:
	// RollingUpdate (the default, unset) or BlueGreen.
	RolloutStrategyAnnotation = "mpool.dev/rollout-strategy"
	// BlueGreenBatchSizeAnnotation is how many blue Nodes are drained at
	// once: an integer, or a percentage of the blue set ("25%", rounded
	// up), as GKE's batchNodeCount / batchPercentage. Unset: 1.
	BlueGreenBatchSizeAnnotation = "mpool.dev/blue-green-batch-size"
	// BlueGreenBatchSoakAnnotation is the wait after each batch is drained,
	// a Go duration, as GKE's batchSoakDuration. Unset: 0.
	BlueGreenBatchSoakAnnotation = "mpool.dev/blue-green-batch-soak"
	// BlueGreenPoolSoakAnnotation is how long the drained blue set is kept,
	// cordoned, before it is deleted: a Go duration, as GKE's
	// nodePoolSoakDuration. Unset: DefaultBlueGreenPoolSoak.
	BlueGreenPoolSoakAnnotation = "mpool.dev/blue-green-pool-soak"
	// BlueGreenAnnotation on an infra pool is the engine's record of the
	// blue-green rollout in progress (rollout.BlueGreenRecord, JSON): the
	// state a restarted manager resumes from.
	BlueGreenAnnotation = "mpool.dev/blue-green"
	// BlueGreenNodeLabel, with the value BlueGreenCordonedStatus, marks a
	// Node the blue-green rollout cordoned (a blue Node): only those are
	// made schedulable again by a rollback.
	BlueGreenNodeLabel = UpgradeStatusLabel
	// BlueGreenCordonedStatus is BlueGreenNodeLabel's value on a blue Node.
	BlueGreenCordonedStatus = "BlueCordoned"
)

// Rollout strategies (RolloutStrategyAnnotation).
const (
	// StrategyRollingUpdate replaces instances within maxSurge and
	// maxUnavailable. The default.
	StrategyRollingUpdate = "RollingUpdate"
	// StrategyBlueGreen creates the full new set, cordons and drains the
	// old one in batches, soaks, then deletes it.
	StrategyBlueGreen = "BlueGreen"
)

// DefaultBlueGreenPoolSoak is the pool soak of a pool without
// BlueGreenPoolSoakAnnotation, as GKE's default nodePoolSoakDuration.
const DefaultBlueGreenPoolSoak = time.Hour

// ReadBlueGreen resolves the strategy annotations of the pool's objects
// (later ones win: the MachinePool, then the infra pool). It returns nil
// for a rolling update. An unreadable value is returned as an error with
// what applies instead: an unknown strategy is a rolling update, an
// unreadable setting takes its default.
func ReadBlueGreen(objs ...metav1.Object) (*rollout.BlueGreenSettings, error) {
	strategy := strings.TrimSpace(lastAnnotation(RolloutStrategyAnnotation, objs))
	switch strategy {
	case "", StrategyRollingUpdate:
		return nil, nil
	case StrategyBlueGreen:
	default:
		return nil, fmt.Errorf("annotation %s: %q is not one of RollingUpdate, BlueGreen; RollingUpdate applies", RolloutStrategyAnnotation, strategy)
	}
	s := &rollout.BlueGreenSettings{PoolSoak: DefaultBlueGreenPoolSoak}
	var errs []string
	if v := strings.TrimSpace(lastAnnotation(BlueGreenBatchSizeAnnotation, objs)); v != "" {
		b := intstr.Parse(v)
		if _, err := (rollout.BlueGreenSettings{BatchSize: &b}).BatchCount(1); err != nil || (b.Type == intstr.Int && b.IntVal < 1) || (b.Type == intstr.String && !validPercent(v)) {
			errs = append(errs, fmt.Sprintf("annotation %s: %q is not a positive integer or a percentage such as \"25%%\"", BlueGreenBatchSizeAnnotation, v))
		} else {
			s.BatchSize = &b
		}
	}
	read := func(key string, into *time.Duration) {
		v := strings.TrimSpace(lastAnnotation(key, objs))
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v) // "0" is a duration: none
		if err != nil || d < 0 {
			errs = append(errs, fmt.Sprintf("annotation %s: %q is not a non-negative duration such as \"30m\"", key, v))
			return
		}
		*into = d
	}
	read(BlueGreenBatchSoakAnnotation, &s.BatchSoak)
	read(BlueGreenPoolSoakAnnotation, &s.PoolSoak)
	if len(errs) > 0 {
		return s, fmt.Errorf("%s; the default applies", strings.Join(errs, "; "))
	}
	return s, nil
}

// validPercent reports whether v is a percentage in (0, 100].
func validPercent(v string) bool {
	digits, ok := strings.CutSuffix(v, "%")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(digits)
	return err == nil && n > 0 && n <= 100
}

// ParseBlueGreen reads BlueGreenAnnotation; false when absent or unreadable.
func ParseBlueGreen(v string) (*rollout.BlueGreenRecord, bool) {
	if v == "" {
		return nil, false
	}
	var r rollout.BlueGreenRecord
	if err := json.Unmarshal([]byte(v), &r); err != nil || r.Green == "" || r.Phase == "" {
		return nil, false
	}
	return &r, true
}

// FormatBlueGreen writes r as BlueGreenAnnotation's value.
func FormatBlueGreen(r *rollout.BlueGreenRecord) string {
	b, err := json.Marshal(r)
	if err != nil {
		// A struct of strings, times and slices always marshals.
		panic(err)
	}
	return string(b)
}
