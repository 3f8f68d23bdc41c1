package rollout

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Defaults for a Strategy whose budgets are not set.
var (
	defaultMaxSurge       = intstr.FromInt32(1)
	defaultMaxUnavailable = intstr.FromInt32(0)
)

// ResolveBudgets turns a strategy's maxSurge and maxUnavailable into instance
// counts for desired replicas. Percentages are of desired; surge rounds up and
// unavailable rounds down. Unset values default to a surge of 1 and an
// unavailable of 0. It fails when a value is negative, is a percentage above
// 100% or cannot be parsed, or when both are set to zero. When both only round
// to zero (percentages of a very small pool), unavailable becomes 1 so that the
// pool can still roll, as Kubernetes Deployments and Cluster API do.
func ResolveBudgets(desired int32, s Strategy) (surge, unavailable int32, err error) {
	if desired < 0 {
		return 0, 0, fmt.Errorf("desired replicas %d is negative", desired)
	}
	surgeValue := intstr.ValueOrDefault(s.MaxSurge, defaultMaxSurge)
	unavailableValue := intstr.ValueOrDefault(s.MaxUnavailable, defaultMaxUnavailable)

	surge, surgeZero, err := scaleBudget(surgeValue, desired, true)
	if err != nil {
		return 0, 0, fmt.Errorf("maxSurge: %w", err)
	}
	unavailable, unavailableZero, err := scaleBudget(unavailableValue, desired, false)
	if err != nil {
		return 0, 0, fmt.Errorf("maxUnavailable: %w", err)
	}
	if surgeZero && unavailableZero {
		return 0, 0, errors.New("maxSurge and maxUnavailable cannot both be zero")
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, nil
}

// scaleBudget validates one budget and scales it against desired. zero reports
// a budget written as zero (0 or "0%"), as opposed to one that rounds to zero.
func scaleBudget(v *intstr.IntOrString, desired int32, roundUp bool) (n int32, zero bool, err error) {
	switch v.Type {
	case intstr.Int:
		if v.IntVal < 0 {
			return 0, false, fmt.Errorf("%d is negative", v.IntVal)
		}
		return v.IntVal, v.IntVal == 0, nil
	case intstr.String:
		digits, ok := strings.CutSuffix(v.StrVal, "%")
		if !ok {
			return 0, false, fmt.Errorf("%q is neither an integer nor a percentage", v.StrVal)
		}
		pct, err := strconv.Atoi(digits)
		if err != nil {
			return 0, false, fmt.Errorf("%q is not a valid percentage", v.StrVal)
		}
		if pct < 0 || pct > 100 {
			return 0, false, fmt.Errorf("%q is outside 0%%..100%%", v.StrVal)
		}
		scaled, err := intstr.GetScaledValueFromIntOrPercent(v, int(desired), roundUp)
		if err != nil {
			return 0, false, fmt.Errorf("scaling %q against %d replicas: %w", v.StrVal, desired, err)
		}
		return int32(scaled), pct == 0, nil
	default:
		return 0, false, fmt.Errorf("unknown int-or-string type %d", v.Type)
	}
}

// maxCapacity is the most live instances a group may have: desired + surge.
// It is computed in int64 so that a huge integer surge cannot overflow.
func maxCapacity(desired, surge int32) int64 {
	return int64(desired) + int64(surge)
}

// minAvailable is the fewest available instances the planner may leave when it
// deletes an available instance: desired - unavailable (possibly negative, which
// means no limit).
func minAvailable(desired, unavailable int32) int64 {
	return int64(desired) - int64(unavailable)
}

// canDeleteAvailable reports whether one more available instance may be
// deleted while available instances remain: the rule is
// available - 1 >= desired - maxUnavailable.
func canDeleteAvailable(available, minAvail int64) bool {
	return available-1 >= minAvail
}

// availableAt reports whether an instance Ready since readySince counts as
// available at now, that is Ready for at least minReady; when it is Ready but
// not yet available, wait is how long until it is.
func availableAt(readySince *time.Time, now time.Time, minReady time.Duration) (available bool, wait time.Duration) {
	if readySince == nil {
		return false, 0
	}
	if minReady <= 0 {
		return true, 0
	}
	at := readySince.Add(minReady)
	if !now.Before(at) {
		return true, 0
	}
	return false, at.Sub(now)
}
