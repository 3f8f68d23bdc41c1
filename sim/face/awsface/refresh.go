package awsface

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// Instance refreshes of the AWS face (Amazon EC2 Auto Scaling's
// StartInstanceRefresh, DescribeInstanceRefreshes and
// CancelInstanceRefresh), modelled so that a user who leaves rollouts to
// AWS gets AWS's behaviour. A group's refreshes live in its payload,
// newest first. A refresh replaces the instances it found at its start:
// every one, or with SkipMatching those not launched from the group's
// current launch template version. It proceeds in steps, applied when the
// group is next read (as the face's other time-based transitions are):
//
//   - it waits while a new instance is not InService, or is within its
//     warmup (InstanceWarmup, else the group's DefaultInstanceWarmup,
//     else its HealthCheckGracePeriod) since the face first saw it
//     InService;
//   - otherwise it launches up to MaxHealthyPercentage of the desired
//     capacity (default 100%) and terminates old instances as long as
//     MinHealthyPercentage (default 90%) of the desired capacity stays
//     InService and healthy; old instances that are unhealthy go first,
//     without counting against that budget; when neither bound leaves
//     room, one instance is replaced at a time: terminated first, or
//     launched first when MaxHealthyPercentage was given (AWS's
//     documented difference);
//   - instances launched above the desired capacity (MaxHealthyPercentage
//     above 100) are matched, once warmed up, by as many old instances
//     terminated.
//
// Statuses are AWS's: Pending until the first step, InProgress,
// Successful once no instance it must replace is left, Failed when a new
// instance failed to boot, Cancelling then Cancelled after
// CancelInstanceRefresh. A refresh does not progress while the group's
// InstanceRefresh, Launch or Terminate process is suspended. One refresh
// at a time: a second StartInstanceRefresh is InstanceRefreshInProgress.
// DesiredConfiguration, checkpoints, bake time and rollbacks are not
// modelled (refused with ValidationError).

// Operation names of the instance refresh actions.
const (
	OpAWSStartInstanceRefresh      = "aws.autoscaling.StartInstanceRefresh"
	OpAWSDescribeInstanceRefreshes = "aws.autoscaling.DescribeInstanceRefreshes"
	OpAWSCancelInstanceRefresh     = "aws.autoscaling.CancelInstanceRefresh"
)

// AWS's instance refresh defaults and the history the face keeps.
const (
	awsDefaultMinHealthy = 90
	awsDefaultMaxHealthy = 100
	awsMaxRefreshes      = 50
)

// awsRefresh is an instance refresh as the face keeps it.
type awsRefresh struct {
	ID           string     `json:"id"`
	Status       string     `json:"status"`
	StatusReason string     `json:"statusReason,omitempty"`
	Start        time.Time  `json:"start"`
	End          *time.Time `json:"end,omitempty"`
	MinHealthy   int32      `json:"minHealthy"`
	// MaxHealthy is nil when the request did not set it.
	MaxHealthy   *int32 `json:"maxHealthy,omitempty"`
	Warmup       *int32 `json:"warmup,omitempty"`
	SkipMatching bool   `json:"skipMatching,omitempty"`
	// Replace are the instances the refresh replaces (found at its
	// start); Total is how many they were.
	Replace []string `json:"replace,omitempty"`
	Total   int      `json:"total"`
	// Kept are the instances in the group at its start it does not
	// replace (SkipMatching): not waited on as new ones.
	Kept []string `json:"kept,omitempty"`
	// Surged is how many instances it launched above the desired
	// capacity, to be matched by old ones terminated.
	Surged int `json:"surged,omitempty"`
	// InService is when the face first saw each new instance InService.
	InService map[string]time.Time `json:"inService,omitempty"`
}

func (r *awsRefresh) active() bool {
	return r.Status == awsapi.RefreshPending || r.Status == awsapi.RefreshInProgress || r.Status == awsapi.RefreshCancelling
}

// activeRefresh returns the group's refresh in progress, or nil.
func (p *awsGroupPayload) activeRefresh() *awsRefresh {
	for i := range p.Refreshes {
		if p.Refreshes[i].active() {
			return &p.Refreshes[i]
		}
	}
	return nil
}

// refreshSurge is how many instances the group's refresh keeps above its
// desired capacity.
func (p awsGroupPayload) refreshSurge() int {
	if r := p.activeRefresh(); r != nil {
		return r.Surged
	}
	return 0
}

// warmup is the refresh's instance warmup.
func (r *awsRefresh) warmup(p awsGroupPayload) time.Duration {
	switch {
	case r.Warmup != nil:
		return time.Duration(*r.Warmup) * time.Second
	case p.DefaultInstanceWarmup != nil:
		return time.Duration(*p.DefaultInstanceWarmup) * time.Second
	}
	return time.Duration(p.HealthCheckGrace) * time.Second
}

func (r *awsRefresh) wire(group string, p awsGroupPayload, g *core.Group) awsapi.InstanceRefresh {
	out := awsapi.InstanceRefresh{InstanceRefreshID: r.ID, AutoScalingGroupName: group, Status: r.Status, StatusReason: r.StatusReason,
		StartTime: AWSTime(r.Start), InstancesToUpdate: int32(len(r.remaining(g))),
		Preferences: &awsapi.RefreshPreferences{MinHealthyPercentage: &r.MinHealthy, MaxHealthyPercentage: r.MaxHealthy, SkipMatching: &r.SkipMatching}}
	w := int32(r.warmup(p) / time.Second)
	out.Preferences.InstanceWarmup = &w
	if r.End != nil {
		out.EndTime = AWSTime(*r.End)
	}
	if !r.active() {
		out.InstancesToUpdate = 0
	}
	switch {
	case r.Status == awsapi.RefreshSuccessful || r.Total == 0:
		out.PercentageComplete = 100
	default:
		out.PercentageComplete = int32(100 * (r.Total - int(out.InstancesToUpdate)) / r.Total)
	}
	return out
}

// remaining are the instances the refresh still has to replace: those of
// Replace still in the group and not leaving it.
func (r *awsRefresh) remaining(g *core.Group) []core.Instance {
	var out []core.Instance
	for _, in := range g.Instances {
		if !awsLeaving(in) && slices.Contains(r.Replace, in.ID) {
			out = append(out, in)
		}
	}
	return out
}

// awsRefreshMu serializes the progress of instance refreshes.
var awsRefreshMu sync.Mutex

// progressRefresh applies the steps of g's instance refresh due now (see
// above) and returns the group as it is then.
func (h *awsHandler) progressRefresh(req *awsRequest, g *core.Group) *core.Group {
	if p := readAWSPayload(g); p.activeRefresh() == nil {
		return g
	}
	awsRefreshMu.Lock()
	defer awsRefreshMu.Unlock()
	ng, err := h.scope(req).GetGroup(g.Name)
	if err != nil {
		return g
	}
	out, err := h.refreshStep(req, ng)
	if err != nil {
		h.env.Log.Error(err, "Instance refresh step failed", "group", g.Name)
		return ng
	}
	return out
}

// refreshStep is one step of g's instance refresh.
func (h *awsHandler) refreshStep(req *awsRequest, g *core.Group) (*core.Group, error) {
	p := readAWSPayload(g)
	r := p.activeRefresh()
	if r == nil || g.Operation != nil && g.Operation.Type == core.OperationDelete {
		return g, nil
	}
	now := h.env.Cloud.Clock().Now().UTC()
	const cause = "an instance was launched in response to an instance refresh"
	end := func(status, reason string) (*core.Group, error) {
		r.Status, r.StatusReason, r.End, r.Surged = status, reason, &now, 0
		h.env.Log.V(1).Info("Instance refresh ended", "group", g.Name, "refresh", r.ID, "status", status)
		return h.apply(req, g.Name, &p, g, cause)
	}
	if r.Status == awsapi.RefreshCancelling {
		return end(awsapi.RefreshCancelled, "Instance refresh was cancelled by a user request.")
	}
	if p.suspended(awsapi.ProcessInstanceRefresh, awsapi.ProcessLaunch, awsapi.ProcessTerminate) {
		return g, nil
	}
	changed := r.Status == awsapi.RefreshPending
	r.Status = awsapi.RefreshInProgress

	// New instances: wait for each to be InService and warmed up.
	warmup := r.warmup(p)
	waiting := false
	healthy := 0
	for i := range g.Instances {
		in := &g.Instances[i]
		if awsLeaving(*in) {
			continue
		}
		up := h.inService(in)
		if up {
			healthy++
		}
		if slices.Contains(r.Replace, in.ID) || slices.Contains(r.Kept, in.ID) {
			continue
		}
		switch {
		case in.State == core.StateFailed:
			return end(awsapi.RefreshFailed, fmt.Sprintf("Instance refresh failed: the new instance %s failed to launch (%s).", in.ID, in.Message))
		case !up:
			waiting = true
		default:
			if r.InService == nil {
				r.InService = map[string]time.Time{}
			}
			seen, ok := r.InService[in.ID]
			if !ok {
				seen, r.InService[in.ID], changed = now, now, true
			}
			if now.Before(seen.Add(warmup)) {
				waiting = true
			}
		}
	}
	save := func() (*core.Group, error) {
		if !changed {
			return g, nil
		}
		return h.applyModelOnly(req, g, &p)
	}
	if waiting {
		return save()
	}
	remaining := r.remaining(g)
	// Instances launched above the desired capacity are warm: as many old
	// ones go.
	if r.Surged > 0 {
		n := min(r.Surged, len(remaining))
		r.Surged = 0
		return h.refreshReplace(req, g, &p, remaining[:n], cause)
	}
	if len(remaining) == 0 {
		return end(awsapi.RefreshSuccessful, "")
	}
	desired := int(p.Desired)
	minCount := (desired*int(r.MinHealthy) + 99) / 100
	maxPct := int32(awsDefaultMaxHealthy)
	if r.MaxHealthy != nil {
		maxPct = *r.MaxHealthy
	}
	maxCount := max(desired*int(maxPct)/100, desired)
	live := awsLive(g)
	// Unhealthy old instances go first, outside the budget.
	slices.SortStableFunc(remaining, func(a, b core.Instance) int {
		ua, ub := !h.inService(&a), !h.inService(&b)
		switch {
		case ua == ub:
			return 0
		case ua:
			return -1
		}
		return 1
	})
	var victims []core.Instance
	for _, in := range remaining {
		if !h.inService(&in) {
			victims = append(victims, in)
		}
	}
	surge := max(0, min(len(remaining)-len(victims), maxCount-live))
	budget := max(0, healthy-minCount)
	n := len(victims) + max(0, min(len(remaining)-len(victims)-surge, budget))
	if surge == 0 && n == 0 {
		if r.MaxHealthy != nil {
			surge = 1
		} else {
			n = 1
		}
	}
	victims = remaining[:n]
	r.Surged = surge
	h.env.Log.V(1).Info("Instance refresh step", "group", g.Name, "refresh", r.ID, "terminate", len(victims), "surge", surge, "remaining", len(remaining))
	return h.refreshReplace(req, g, &p, victims, cause)
}

// refreshReplace terminates victims (the group's instances a refresh
// replaces) and applies the group: its capacity, with the refresh's surge,
// launches their replacements.
func (h *awsHandler) refreshReplace(req *awsRequest, g *core.Group, p *awsGroupPayload, victims []core.Instance, cause string) (*core.Group, error) {
	if len(victims) > 0 {
		ids := make([]string, 0, len(victims))
		for _, in := range victims {
			ids = append(ids, in.ID)
		}
		var err error
		if g, err = h.terminateInstances(req, g, ids); err != nil {
			return nil, err
		}
		now := h.env.Cloud.Clock().Now().UTC()
		var acts []awsActivity
		for _, id := range ids {
			acts = append(acts, awsActivity{Kind: "terminate", InstanceID: id, Start: now,
				Cause: fmt.Sprintf("At %s an instance was taken out of service in response to an instance refresh.", AWSTime(now))})
		}
		h.recordActivities(req, g.Name, acts, false)
	}
	return h.apply(req, g.Name, p, g, cause)
}

// startInstanceRefresh serves StartInstanceRefresh (Strategy Rolling).
func (h *awsHandler) startInstanceRefresh(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name := req.form.Get("AutoScalingGroupName")
	f := req.form
	awsRefreshMu.Lock()
	defer awsRefreshMu.Unlock()
	g, p, err := h.group(req, name)
	if err == nil && g.Operation != nil && g.Operation.Type == core.OperationDelete {
		err = errBeingDeleted(name)
	}
	if err == nil && p.activeRefresh() != nil {
		err = &awsError{status: http.StatusBadRequest, code: awsapi.CodeInstanceRefreshInProgress,
			message: "An Instance Refresh is already in progress and blocks the execution of this Instance Refresh."}
	}
	if err == nil {
		switch s := f.Get("Strategy"); {
		case s != "" && s != "Rolling":
			err = validationError("1 validation error detected: Value '%s' at 'strategy' failed to satisfy constraint: Member must satisfy enum value set: [Rolling, ReplaceRootVolume]", s)
		case qHas(f, "DesiredConfiguration"), qHas(f, "Preferences.CheckpointPercentages"), qHas(f, "Preferences.BakeTime"),
			qBool(f, "Preferences.AutoRollback") != nil && *qBool(f, "Preferences.AutoRollback"):
			err = validationError("DesiredConfiguration, checkpoints, bake time and rollbacks are not supported by the simulated AWS.")
		}
	}
	ref := awsRefresh{Status: awsapi.RefreshPending, MinHealthy: awsDefaultMinHealthy}
	if err == nil {
		err = parseRefreshPreferences(req, &ref)
	}
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	now := h.env.Cloud.Clock().Now().UTC()
	ref.ID = core.UUIDFrom([]byte(AWSHex(32, "refresh", req.account, req.region, name, now.String(), NewRequestID()))[:16])
	ref.Start = now
	for _, in := range g.Instances {
		if awsLeaving(in) {
			continue
		}
		lt := readAWSInstance(in).LaunchTemplate
		if ref.SkipMatching && p.Resolved != nil && lt != nil && *lt == *p.Resolved {
			ref.Kept = append(ref.Kept, in.ID)
			continue
		}
		ref.Replace = append(ref.Replace, in.ID)
	}
	ref.Total = len(ref.Replace)
	p.Refreshes = append([]awsRefresh{ref}, p.Refreshes...)
	if len(p.Refreshes) > awsMaxRefreshes {
		p.Refreshes = p.Refreshes[:awsMaxRefreshes]
	}
	if _, err := h.applyModelOnly(req, g, &p); err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.env.Log.V(1).Info("Instance refresh started", "group", name, "refresh", ref.ID, "instances", ref.Total)
	h.writeResult(w, req, awsapi.StartInstanceRefreshResult{InstanceRefreshID: ref.ID})
}

// parseRefreshPreferences reads Preferences.* over r, with AWS's ranges.
func parseRefreshPreferences(req *awsRequest, r *awsRefresh) error {
	f := req.form
	pct := func(key string, lo, hi int64) (*int32, error) {
		v, ok := qInt(f, key)
		if !ok || v != nil && (*v < lo || *v > hi) {
			return nil, validationError("1 validation error detected: Value '%s' at 'preferences.%s' failed to satisfy constraint: Member must have value between %d and %d",
				f.Get(key), lowerFirst(key[len("Preferences."):]), lo, hi)
		}
		if v == nil {
			return nil, nil
		}
		n := int32(*v)
		return &n, nil
	}
	minH, err := pct("Preferences.MinHealthyPercentage", 0, 100)
	if err != nil {
		return err
	}
	maxH, err := pct("Preferences.MaxHealthyPercentage", 100, 200)
	if err != nil {
		return err
	}
	warm, err := pct("Preferences.InstanceWarmup", 0, 1<<31-1)
	if err != nil {
		return err
	}
	if minH != nil {
		r.MinHealthy = *minH
	}
	if maxH != nil {
		switch {
		case minH == nil:
			return validationError("You must specify MinHealthyPercentage when you specify MaxHealthyPercentage.")
		case *maxH-*minH > 100:
			return validationError("The difference between MaxHealthyPercentage and MinHealthyPercentage cannot be greater than 100.")
		case *minH == 100 && *maxH == 100:
			return validationError("MinHealthyPercentage and MaxHealthyPercentage cannot both be 100.")
		}
	}
	r.MaxHealthy, r.Warmup = maxH, warm
	if v := qBool(f, "Preferences.SkipMatching"); v != nil {
		r.SkipMatching = *v
	}
	return nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]|0x20) + s[1:]
}

// describeInstanceRefreshes serves DescribeInstanceRefreshes: the group's
// refreshes (or those InstanceRefreshIds names), newest first, paged
// (MaxRecords default 50, at most 100).
func (h *awsHandler) describeInstanceRefreshes(w http.ResponseWriter, req *awsRequest, g *core.Group, _ awsGroupPayload) {
	name := g.Name
	limit, ok := h.asgMaxRecords(w, req, 50)
	if !ok {
		return
	}
	off, ok := h.asgPageOffset(w, req, req.action+name)
	if !ok {
		return
	}
	g = h.converge(req, g)
	p := readAWSPayload(g)
	ids := qList(req.form, "InstanceRefreshIds.member")
	var list []awsapi.InstanceRefresh
	for i := range p.Refreshes {
		if len(ids) == 0 || slices.Contains(ids, p.Refreshes[i].ID) {
			list = append(list, p.Refreshes[i].wire(name, p, g))
		}
	}
	page, next := pageOf(list, off, limit, req.action+name)
	h.writeResult(w, req, awsapi.DescribeInstanceRefreshesResult{InstanceRefreshes: append([]awsapi.InstanceRefresh{}, page...), NextToken: next})
}

// cancelInstanceRefresh serves CancelInstanceRefresh: the refresh in
// progress is Cancelling, and Cancelled once the group is next read (the
// instances it launched above the desired capacity go).
func (h *awsHandler) cancelInstanceRefresh(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name := req.form.Get("AutoScalingGroupName")
	awsRefreshMu.Lock()
	defer awsRefreshMu.Unlock()
	g, p, err := h.group(req, name)
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	ref := p.activeRefresh()
	if ref == nil || ref.Status == awsapi.RefreshCancelling {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeActiveInstanceRefreshNotFound,
			"No in progress or pending Instance Refresh found for Auto Scaling group "+name)
		return
	}
	ref.Status = awsapi.RefreshCancelling
	id := ref.ID
	if _, err := h.applyModelOnly(req, g, &p); err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.env.Log.V(1).Info("Instance refresh cancelling", "group", name, "refresh", id)
	h.writeResult(w, req, awsapi.StartInstanceRefreshResult{InstanceRefreshID: id})
}
