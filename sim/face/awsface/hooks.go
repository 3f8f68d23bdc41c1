package awsface

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// Lifecycle hooks of the AWS face (Amazon EC2 Auto Scaling's
// Put/Describe/DeleteLifecycleHook, CompleteLifecycleAction,
// RecordLifecycleActionHeartbeat and CreateAutoScalingGroup's
// LifecycleHookSpecificationList). A group's hooks live in its payload.
// A launch hook holds each new instance in Pending:Wait: the core keeps it
// Creating, neither booted nor joined (InstanceIdentity.Hold), until every
// launch hook's action is completed with CONTINUE or times out with
// DefaultResult CONTINUE (then Pending:Proceed while it boots); ABANDON
// terminates it and the group launches a replacement. A terminate hook
// holds an instance TerminateInstanceInAutoScalingGroup or a scale-in
// takes out in Terminating:Wait, still running, until its action is
// completed or times out (either result terminates it). Heartbeat
// timeouts are measured on the cloud's clock and applied when the group
// is next read, as the face's other time-based transitions are. No
// notification is sent (the simulated AWS has no SNS or SQS).

// Operation names of the lifecycle hook actions.
const (
	OpAWSPutLifecycleHook               = "aws.autoscaling.PutLifecycleHook"
	OpAWSDescribeLifecycleHooks         = "aws.autoscaling.DescribeLifecycleHooks"
	OpAWSDeleteLifecycleHook            = "aws.autoscaling.DeleteLifecycleHook"
	OpAWSCompleteLifecycleAction        = "aws.autoscaling.CompleteLifecycleAction"
	OpAWSRecordLifecycleActionHeartbeat = "aws.autoscaling.RecordLifecycleActionHeartbeat"
)

// AWS's lifecycle hook limits and defaults.
const (
	awsMaxHooks             = 50
	awsMinHeartbeat         = 30
	awsMaxHeartbeat         = 7200
	awsDefaultHeartbeat     = 3600
	awsMaxGlobalTimeout     = 172800
	awsGlobalTimeoutFactor  = 100
	awsMaxNotificationBytes = 1023
)

// awsHook is a lifecycle hook as the face keeps it in the group's payload.
type awsHook struct {
	Name                  string `json:"name"`
	Transition            string `json:"transition"`
	NotificationTargetARN string `json:"notificationTargetARN,omitempty"`
	RoleARN               string `json:"roleARN,omitempty"`
	NotificationMetadata  string `json:"notificationMetadata,omitempty"`
	HeartbeatTimeout      int32  `json:"heartbeatTimeout"`
	DefaultResult         string `json:"defaultResult"`
}

// awsHookWait is a lifecycle action an instance waits on: one per hook of
// its transition, with the hook's timeout and default result as they were
// when it started waiting.
type awsHookWait struct {
	Hook       string `json:"hook"`
	Transition string `json:"transition"`
	Token      string `json:"token"`
	Timeout    int32  `json:"timeout"`
	Default    string `json:"default"`
	// Start is when the action (or its last heartbeat) started; nil is
	// the instance's creation (a launch).
	Start *time.Time `json:"start,omitempty"`
	// Abandon records an ABANDON among several launch hooks' results.
	Abandon bool `json:"abandon,omitempty"`
}

// deadline is when w times out for an instance created at created.
func (w awsHookWait) deadline(created time.Time) time.Time {
	start := created
	if w.Start != nil {
		start = *w.Start
	}
	return start.Add(time.Duration(w.Timeout) * time.Second)
}

// waits returns the actions an instance of a group with hooks waits on
// when entering transition.
func (p awsGroupPayload) waits(group, id, transition string, start *time.Time) []awsHookWait {
	var out []awsHookWait
	for _, hk := range p.Hooks {
		if hk.Transition != transition {
			continue
		}
		out = append(out, awsHookWait{Hook: hk.Name, Transition: transition, Timeout: hk.HeartbeatTimeout, Default: hk.DefaultResult, Start: start,
			Token: core.UUIDFrom([]byte(AWSHex(32, "lifecycle-action", group, id, hk.Name, transition, fmt.Sprint(start)))[:16])})
	}
	return out
}

// hasHook reports whether the group has a hook of transition.
func (p awsGroupPayload) hasHook(transition string) bool {
	return slices.ContainsFunc(p.Hooks, func(h awsHook) bool { return h.Transition == transition })
}

// awsTerminateWaiting reports whether an instance waits on a terminate
// hook: still running, but on its way out of the group.
func awsTerminateWaiting(in core.Instance) bool {
	return slices.ContainsFunc(readAWSInstance(in).Waits, func(w awsHookWait) bool { return w.Transition == awsapi.TransitionTerminating })
}

// awsLeaving reports whether an instance is on its way out of its group:
// terminating, or waiting on a terminate hook.
func awsLeaving(in core.Instance) bool {
	return in.State == core.StateDeleting || awsTerminateWaiting(in)
}

// awsTerminateWaitingCount counts g's instances waiting on a terminate
// hook: the core counts them in the group's capacity, the group no longer.
func awsTerminateWaitingCount(g *core.Group) int {
	n := 0
	for _, in := range g.Instances {
		if in.State != core.StateDeleting && awsTerminateWaiting(in) {
			n++
		}
	}
	return n
}

// awsInstanceLifecycle is an instance's lifecycle state as Auto Scaling
// names it, its hooks' wait states included.
func awsInstanceLifecycle(in core.Instance) string {
	state := awsLifecycle(in.State)
	if in.State == core.StateDeleting {
		return state
	}
	ip := readAWSInstance(in)
	for _, w := range ip.Waits {
		if w.Transition == awsapi.TransitionTerminating {
			return awsapi.StateTerminatingWait
		}
	}
	if len(ip.Waits) > 0 {
		return awsapi.StatePendingWait
	}
	if ip.Proceeded && (in.State == core.StateCreating || in.State == core.StateBooting) {
		return awsapi.StatePendingProceed
	}
	return state
}

// parseHook reads a hook's fields from the form (prefix "" for
// PutLifecycleHook, "LifecycleHookSpecificationList.member.N." for
// CreateAutoScalingGroup) over hk.
func parseHook(f map[string][]string, prefix string, hk *awsHook, create bool) error {
	get := func(k string) (string, bool) {
		v, ok := f[prefix+k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	if v, ok := get("LifecycleTransition"); ok {
		hk.Transition = v
	}
	switch {
	case hk.Transition == "" && create:
		return validationError("1 validation error detected: Value null at 'lifecycleTransition' failed to satisfy constraint: Member must not be null")
	case hk.Transition != awsapi.TransitionLaunching && hk.Transition != awsapi.TransitionTerminating:
		return validationError("Invalid Lifecycle Transition: %s (use %s or %s)", hk.Transition, awsapi.TransitionLaunching, awsapi.TransitionTerminating)
	}
	if v, ok := get("HeartbeatTimeout"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < awsMinHeartbeat || n > awsMaxHeartbeat {
			return validationError("Heartbeat timeout value %s is invalid: it must be between %d and %d seconds", v, awsMinHeartbeat, awsMaxHeartbeat)
		}
		hk.HeartbeatTimeout = int32(n)
	}
	if hk.HeartbeatTimeout == 0 {
		hk.HeartbeatTimeout = awsDefaultHeartbeat
	}
	if v, ok := get("DefaultResult"); ok {
		if v != awsapi.ResultContinue && v != awsapi.ResultAbandon {
			return validationError("Invalid value %s for DefaultResult: valid values are CONTINUE and ABANDON", v)
		}
		hk.DefaultResult = v
	}
	if hk.DefaultResult == "" {
		hk.DefaultResult = awsapi.ResultAbandon
	}
	if v, ok := get("NotificationTargetARN"); ok {
		hk.NotificationTargetARN = v
	}
	if v, ok := get("RoleARN"); ok {
		hk.RoleARN = v
	}
	if v, ok := get("NotificationMetadata"); ok {
		if len(v) > awsMaxNotificationBytes {
			return validationError("1 validation error detected: Value at 'notificationMetadata' failed to satisfy constraint: Member must have length less than or equal to %d", awsMaxNotificationBytes)
		}
		hk.NotificationMetadata = v
	}
	if hk.NotificationTargetARN != "" && hk.RoleARN == "" {
		return validationError("RoleARN is required when NotificationTargetARN is specified")
	}
	return nil
}

func validHookName(name string) error {
	if name == "" || len(name) > 255 {
		return validationError("1 validation error detected: Value '%s' at 'lifecycleHookName' failed to satisfy constraint: Member must have length between 1 and 255", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '/') {
			return validationError("1 validation error detected: Value '%s' at 'lifecycleHookName' failed to satisfy constraint: Member must satisfy regular expression pattern: [A-Za-z0-9\\-_\\/]+", name)
		}
	}
	return nil
}

// parseHookSpecs reads CreateAutoScalingGroup's
// LifecycleHookSpecificationList: the hooks are there before the group's
// first instances launch.
func parseHookSpecs(req *awsRequest) ([]awsHook, error) {
	var out []awsHook
	for _, n := range qIndices(req.form, "LifecycleHookSpecificationList.member") {
		k := "LifecycleHookSpecificationList.member." + strconv.Itoa(n) + "."
		hk := awsHook{Name: req.form.Get(k + "LifecycleHookName")}
		if err := validHookName(hk.Name); err != nil {
			return nil, err
		}
		if err := parseHook(req.form, k, &hk, true); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o awsHook) bool { return o.Name == hk.Name }) {
			return nil, validationError("Duplicate lifecycle hook name %s in LifecycleHookSpecificationList", hk.Name)
		}
		out = append(out, hk)
	}
	if len(out) > awsMaxHooks {
		return nil, &awsError{status: http.StatusBadRequest, code: awsapi.CodeLimitExceeded, message: fmt.Sprintf("Lifecycle hooks limit of %d exceeded for the AutoScalingGroup.", awsMaxHooks)}
	}
	return out, nil
}

func hookNotFound(group, name string) *awsError {
	return validationError("No Lifecycle Hook found with name %s for AutoScalingGroup %s", name, group)
}

// putLifecycleHook serves PutLifecycleHook: creates the hook, or updates
// the fields sent of an existing one. It applies to instances entering its
// transition from now on.
func (h *awsHandler) putLifecycleHook(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name, hookName := req.form.Get("AutoScalingGroupName"), req.form.Get("LifecycleHookName")
	err := validHookName(hookName)
	var p awsGroupPayload
	if err == nil {
		_, p, err = h.group(req, name)
	}
	if err == nil {
		i := slices.IndexFunc(p.Hooks, func(o awsHook) bool { return o.Name == hookName })
		hk := awsHook{Name: hookName}
		if i >= 0 {
			hk = p.Hooks[i]
		}
		err = parseHook(req.form, "", &hk, i < 0)
		switch {
		case err != nil:
		case i >= 0:
			p.Hooks[i] = hk
		case len(p.Hooks) >= awsMaxHooks:
			err = &awsError{status: http.StatusBadRequest, code: awsapi.CodeLimitExceeded, message: fmt.Sprintf("Lifecycle hooks limit of %d exceeded for AutoScalingGroup %s.", awsMaxHooks, name)}
		default:
			p.Hooks = append(p.Hooks, hk)
		}
	}
	if err == nil {
		err = h.writeHooks(req, name, p.Hooks)
	}
	h.reply(w, req, struct{}{}, err)
}

// writeHooks replaces a group's hooks in its payload.
func (h *awsHandler) writeHooks(req *awsRequest, name string, hooks []awsHook) error {
	_, err := h.scope(req).UpdateGroupPayload(name, core.EditPayload(func(p *awsGroupPayload) error {
		p.Hooks = hooks
		return nil
	}))
	return err
}

// describeLifecycleHooks serves DescribeLifecycleHooks of a group, all or
// those named.
func (h *awsHandler) describeLifecycleHooks(w http.ResponseWriter, req *awsRequest, g *core.Group, p awsGroupPayload) {
	name := g.Name
	names := qList(req.form, "LifecycleHookNames.member")
	out := awsapi.DescribeLifecycleHooksResult{LifecycleHooks: []awsapi.LifecycleHook{}}
	for _, hk := range p.Hooks {
		if len(names) > 0 && !slices.Contains(names, hk.Name) {
			continue
		}
		out.LifecycleHooks = append(out.LifecycleHooks, awsapi.LifecycleHook{
			LifecycleHookName: hk.Name, AutoScalingGroupName: name, LifecycleTransition: hk.Transition,
			NotificationTargetARN: hk.NotificationTargetARN, RoleARN: hk.RoleARN, NotificationMetadata: hk.NotificationMetadata,
			HeartbeatTimeout: hk.HeartbeatTimeout, DefaultResult: hk.DefaultResult,
			GlobalTimeout: min(awsGlobalTimeoutFactor*hk.HeartbeatTimeout, awsMaxGlobalTimeout),
		})
	}
	h.writeResult(w, req, out)
}

// deleteLifecycleHook serves DeleteLifecycleHook. Instances waiting on it
// go on as if their actions were completed with its default result.
func (h *awsHandler) deleteLifecycleHook(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name, hookName := req.form.Get("AutoScalingGroupName"), req.form.Get("LifecycleHookName")
	g, p, err := h.group(req, name)
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	i := slices.IndexFunc(p.Hooks, func(o awsHook) bool { return o.Name == hookName })
	if i < 0 {
		h.writeAWSError(w, req, hookNotFound(name, hookName))
		return
	}
	p.Hooks = slices.Delete(p.Hooks, i, i+1)
	if err := h.writeHooks(req, name, p.Hooks); err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	for _, in := range g.Instances {
		for _, wt := range readAWSInstance(in).Waits {
			if wt.Hook == hookName {
				if err := h.completeAction(req, name, in.ID, hookName, wt.Default); err != nil {
					h.writeAWSError(w, req, err)
					return
				}
			}
		}
	}
	h.writeResult(w, req, struct{}{})
}

// completeLifecycleAction serves CompleteLifecycleAction, by
// LifecycleActionToken or InstanceId.
func (h *awsHandler) completeLifecycleAction(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	result := req.form.Get("LifecycleActionResult")
	if result != awsapi.ResultContinue && result != awsapi.ResultAbandon {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError,
			fmt.Sprintf("Invalid value %q for LifecycleActionResult: valid values are CONTINUE and ABANDON", result))
		return
	}
	name, hookName, id, err := h.findAction(req)
	if err == nil {
		err = h.completeAction(req, name, id, hookName, result)
	}
	h.reply(w, req, struct{}{}, err)
}

// recordLifecycleActionHeartbeat serves RecordLifecycleActionHeartbeat: the
// action's heartbeat timeout starts again.
func (h *awsHandler) recordLifecycleActionHeartbeat(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name, hookName, id, err := h.findAction(req)
	if err == nil {
		now := h.env.Cloud.Clock().Now().UTC()
		_, err = h.scope(req).UpdateInstancePayload(name, id, core.EditPayload(func(ip *awsInstancePayload) error {
			for i := range ip.Waits {
				if ip.Waits[i].Hook == hookName {
					ip.Waits[i].Start = &now
				}
			}
			return nil
		}))
	}
	h.reply(w, req, struct{}{}, err)
}

// findAction resolves a lifecycle action's group, hook and instance from
// AutoScalingGroupName, LifecycleHookName and LifecycleActionToken or
// InstanceId, after applying the group's timed-out actions.
func (h *awsHandler) findAction(req *awsRequest) (group, hook, id string, err error) {
	name, hookName := req.form.Get("AutoScalingGroupName"), req.form.Get("LifecycleHookName")
	token, instanceID := req.form.Get("LifecycleActionToken"), req.form.Get("InstanceId")
	if token == "" && instanceID == "" {
		return "", "", "", validationError("Either LifecycleActionToken or InstanceId must be specified.")
	}
	g, p, err := h.group(req, name)
	if err != nil {
		return "", "", "", err
	}
	if !slices.ContainsFunc(p.Hooks, func(o awsHook) bool { return o.Name == hookName }) {
		return "", "", "", hookNotFound(name, hookName)
	}
	g = h.expireHooks(req, g)
	for _, in := range g.Instances {
		if instanceID != "" && in.ID != instanceID {
			continue
		}
		for _, wt := range readAWSInstance(in).Waits {
			if wt.Hook == hookName && (token == "" || wt.Token == token) {
				return name, hookName, in.ID, nil
			}
		}
	}
	if instanceID != "" {
		return "", "", "", validationError("No active Lifecycle Action found with instance ID %s", instanceID)
	}
	return "", "", "", validationError("No active Lifecycle Action found with token %s", token)
}

// completeAction ends instance id's wait on hook with result: once no
// launch hook holds it the instance boots (CONTINUE) or terminates
// (ABANDON, the group launching a replacement); a terminate hook's end
// terminates it.
func (h *awsHandler) completeAction(req *awsRequest, name, id, hook, result string) error {
	sc := h.scope(req)
	var left []awsHookWait
	var transition string
	abandon := false
	g, err := sc.UpdateInstancePayload(name, id, core.EditPayload(func(ip *awsInstancePayload) error {
		i := slices.IndexFunc(ip.Waits, func(w awsHookWait) bool { return w.Hook == hook })
		if i < 0 {
			return validationError("No active Lifecycle Action found with instance ID %s", id)
		}
		transition = ip.Waits[i].Transition
		abandon = result == awsapi.ResultAbandon || slices.ContainsFunc(ip.Waits, func(w awsHookWait) bool { return w.Abandon })
		ip.Waits = slices.Delete(ip.Waits, i, i+1)
		if abandon {
			for j := range ip.Waits {
				ip.Waits[j].Abandon = true
			}
		}
		left = ip.Waits
		if len(left) == 0 && transition == awsapi.TransitionLaunching && !abandon {
			ip.Proceeded = true
		}
		return nil
	}))
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return nil
	}
	now := h.env.Cloud.Clock().Now().UTC()
	switch {
	case transition == awsapi.TransitionLaunching && !abandon:
		h.env.Log.V(1).Info("Lifecycle action completed, instance proceeds", "group", name, "instance", id, "hook", hook)
		_, err = sc.ReleaseInstance(name, id)
		return err
	case transition == awsapi.TransitionLaunching:
		h.env.Log.V(1).Info("Lifecycle action abandoned, terminating instance", "group", name, "instance", id, "hook", hook)
		if g, err = sc.DeleteInstances(name, []string{id}); err != nil {
			return err
		}
		h.recordActivities(req, name, []awsActivity{{Kind: "terminate", InstanceID: id, Start: now, Cause: fmt.Sprintf(
			"At %s instance %s was taken out of service in response to a lifecycle action result of ABANDON from hook %s.", AWSTime(now), id, hook)}}, false)
		h.converge(req, g)
		return nil
	default:
		h.env.Log.V(1).Info("Terminate lifecycle action ended, terminating instance", "group", name, "instance", id, "hook", hook)
		_, err = sc.DeleteInstances(name, []string{id})
		return err
	}
}

// expireHooks applies the default result of g's lifecycle actions whose
// heartbeat timed out, on the cloud's clock; it returns the group as it is
// then.
func (h *awsHandler) expireHooks(req *awsRequest, g *core.Group) *core.Group {
	now := h.env.Cloud.Clock().Now()
	changed := false
	for _, in := range g.Live() {
		for _, wt := range readAWSInstance(in).Waits {
			if now.Before(wt.deadline(in.CreatedAt)) {
				continue
			}
			h.env.Log.V(1).Info("Lifecycle action timed out", "group", g.Name, "instance", in.ID, "hook", wt.Hook, "result", wt.Default)
			if err := h.completeAction(req, g.Name, in.ID, wt.Hook, wt.Default); err == nil {
				changed = true
			}
		}
	}
	if !changed {
		return g
	}
	if ng, err := h.scope(req).GetGroup(g.Name); err == nil {
		return ng
	}
	return g
}

// holdTermination puts instance id of group g in Terminating:Wait when the
// group has terminate hooks, and reports whether it did: the instance
// keeps running, and the core's capacity still counts it, until its
// actions end.
func (h *awsHandler) holdTermination(req *awsRequest, g *core.Group, id string) (bool, error) {
	p := readAWSPayload(g)
	if !p.hasHook(awsapi.TransitionTerminating) {
		return false, nil
	}
	i := slices.IndexFunc(g.Instances, func(in core.Instance) bool { return in.ID == id })
	if i < 0 || g.Instances[i].State == core.StateDeleting {
		return false, nil
	}
	if awsTerminateWaiting(g.Instances[i]) {
		return true, nil
	}
	now := h.env.Cloud.Clock().Now().UTC()
	waits := p.waits(g.Name, id, awsapi.TransitionTerminating, &now)
	_, err := h.scope(req).UpdateInstancePayload(g.Name, id, core.EditPayload(func(ip *awsInstancePayload) error {
		// A launch wait ends here: the instance is leaving.
		ip.Waits = waits
		return nil
	}))
	return err == nil, err
}

// terminateInstances takes instances out of group g: those a terminate
// hook holds wait in Terminating:Wait, the others terminate now. It
// returns the group as it is then.
func (h *awsHandler) terminateInstances(req *awsRequest, g *core.Group, ids []string) (*core.Group, error) {
	var now []string
	for _, id := range ids {
		held, err := h.holdTermination(req, g, id)
		if err != nil {
			return nil, err
		}
		if !held {
			now = append(now, id)
		}
	}
	if len(now) > 0 {
		return h.scope(req).DeleteInstances(g.Name, now)
	}
	return h.scope(req).GetGroup(g.Name)
}
