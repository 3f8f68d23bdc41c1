package awsface

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// Health checks of the AWS face, as Amazon EC2 Auto Scaling's
// (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-health-checks.html):
//
//   - The EC2 status checks apply whatever the group's HealthCheckType
//     (EC2, the default, ELB, VPC_LATTICE or EBS, all of which add to EC2's:
//     the face has no load balancer and reports no other failure). An
//     instance that failed to boot fails them at once; a running instance
//     with the core's fault CloudCheckFailing (an impaired instance status)
//     once the group's HealthCheckGracePeriod (default 0 through the API
//     and the SDKs, as on AWS; the console's 300 is the console's) has
//     passed since its launch. It is then reported Unhealthy.
//   - SetInstanceHealth sets an instance's health as a custom health check
//     does. Healthy does not hide a failing status check (Auto Scaling's
//     HealthCheck process overrides a status set by hand); Unhealthy with
//     ShouldRespectGracePeriod (the default) is acted on once the grace
//     period has passed since the launch.
//   - ReplaceUnhealthy terminates an Unhealthy instance and then launches
//     its replacement (desired capacity unchanged), with an activity for
//     each: "... taken out of service in response to an EC2 instance status
//     checks failure" or "... to a user health-check". It runs when the
//     group is next read (DescribeAutoScalingGroups), as the face's other
//     background work does. Suspended HealthCheck stops the status checks
//     from marking instances Unhealthy; suspended ReplaceUnhealthy (or
//     Terminate) keeps Unhealthy instances in service.

// Auto Scaling's health statuses.
const (
	awsHealthy   = "Healthy"
	awsUnhealthy = "Unhealthy"
)

// OpAWSSetInstanceHealth is SetInstanceHealth's operation name.
const OpAWSSetInstanceHealth = "aws.autoscaling.SetInstanceHealth"

// awsGrace is the group's health check grace period.
func (p awsGroupPayload) awsGrace() time.Duration {
	return time.Duration(p.HealthCheckGrace) * time.Second
}

// statusCheckFailed reports whether in fails its EC2 status checks at now
// as the HealthCheck process sees them: it failed to boot, or its instance
// status is impaired (core.FaultCloudCheckFailing) past the grace period.
// Suspended HealthCheck sees nothing.
func (p awsGroupPayload) statusCheckFailed(in core.Instance, now time.Time) bool {
	if p.suspended(awsapi.ProcessHealthCheck) {
		return false
	}
	return in.State == core.StateFailed || in.State == core.StateRunning && in.Fault == core.FaultCloudCheckFailing &&
		!now.Before(in.CreatedAt.Add(p.awsGrace()))
}

// awsHealth is in's Auto Scaling health status at now (a failed boot is
// reported Unhealthy even while HealthCheck is suspended).
func (p awsGroupPayload) awsHealth(in core.Instance, now time.Time) string {
	if in.State == core.StateDeleting {
		return awsHealthy
	}
	if in.State == core.StateFailed || p.statusCheckFailed(in, now) || readAWSInstance(in).Health == awsUnhealthy {
		return awsUnhealthy
	}
	return awsHealthy
}

// unhealthyCause is why the group replaces in at now, "" when it does not:
// its status checks failed (a failed boot only once the grace period has
// passed since its launch) or a user set it Unhealthy (respecting the
// grace period if asked to).
func (p awsGroupPayload) unhealthyCause(in core.Instance, now time.Time) string {
	if awsLeaving(in) {
		return ""
	}
	inGrace := now.Before(in.CreatedAt.Add(p.awsGrace()))
	switch ip := readAWSInstance(in); {
	case p.statusCheckFailed(in, now) && !inGrace:
		return "an EC2 instance status checks failure"
	case ip.Health == awsUnhealthy && !(ip.RespectGrace && inGrace):
		return "a user health-check"
	}
	return ""
}

// setInstanceHealth serves SetInstanceHealth.
func (h *awsHandler) setInstanceHealth(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	id, status := req.form.Get("InstanceId"), req.form.Get("HealthStatus")
	for _, x := range []struct{ key, v string }{{"instanceId", id}, {"healthStatus", status}} {
		if x.v == "" {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "1 validation error detected: Value null at '"+x.key+"' failed to satisfy constraint: Member must not be null")
			return
		}
	}
	if status != awsHealthy && status != awsUnhealthy {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, fmt.Sprintf("Health status %s is not a valid health status (valid values: Healthy, Unhealthy).", status))
		return
	}
	respect := true
	if v := qBool(req.form, "ShouldRespectGracePeriod"); v != nil {
		respect = *v
	}
	sc := h.scope(req)
	g, _ := h.instanceGroup(req, id)
	if g == nil {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "Instance Id not found - No managed instance found for instance ID: "+id)
		return
	}
	_, err := sc.UpdateInstancePayload(g.Name, id, core.EditPayload(func(ip *awsInstancePayload) error {
		ip.Health, ip.RespectGrace = status, respect
		if status == awsHealthy {
			ip.Health, ip.RespectGrace = "", false
		}
		return nil
	}))
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.env.Log.V(1).Info("Instance health set", "group", g.Name, "instance", id, "health", status)
	h.writeResult(w, req, nil)
}
