package apitest

import (
	"fmt"
	"strings"
	"testing"
)

// TestLifecycleHookValidation: AWSMachinePool spec.lifecycleHooks as the
// API server admits them: AWS's heartbeat limits, the enums, unique names,
// a notification target with its role, each refusal saying what to fix.
func TestLifecycleHookValidation(t *testing.T) {
	const launch = "{name: launch, lifecycleTransition: 'autoscaling:EC2_INSTANCE_LAUNCHING'"
	tests := []struct {
		name, patch, want, fix string
	}{
		{name: "valid", patch: "spec: {lifecycleHooks: [" + launch + ", heartbeatTimeout: 5m, defaultResult: CONTINUE}, {name: drain, lifecycleTransition: 'autoscaling:EC2_INSTANCE_TERMINATING', notificationTargetARN: 'arn:aws:sqs:us-east-1:1:q', roleARN: 'arn:aws:iam::1:role/r'}]}"},
		{name: "heartbeat at the limits", patch: "spec: {lifecycleHooks: [" + launch + ", heartbeatTimeout: 30s}, {name: b, lifecycleTransition: 'autoscaling:EC2_INSTANCE_LAUNCHING', heartbeatTimeout: 2h}]}"},
		{name: "heartbeat too short", patch: "spec: {lifecycleHooks: [" + launch + ", heartbeatTimeout: 10s}]}", want: "spec.lifecycleHooks[0].heartbeatTimeout", fix: "between 30s and 7200s"},
		{name: "heartbeat too long", patch: "spec: {lifecycleHooks: [" + launch + ", heartbeatTimeout: 3h}]}", want: "spec.lifecycleHooks[0].heartbeatTimeout", fix: "between 30s and 7200s"},
		{name: "heartbeat not a duration", patch: "spec: {lifecycleHooks: [" + launch + ", heartbeatTimeout: soon}]}", want: "spec.lifecycleHooks[0].heartbeatTimeout"},
		{name: "unknown transition", patch: "spec: {lifecycleHooks: [{name: a, lifecycleTransition: 'autoscaling:EC2_INSTANCE_REBOOTING'}]}", want: "spec.lifecycleHooks[0].lifecycleTransition", fix: "autoscaling:EC2_INSTANCE_LAUNCHING"},
		{name: "unknown default result", patch: "spec: {lifecycleHooks: [" + launch + ", defaultResult: RETRY}]}", want: "spec.lifecycleHooks[0].defaultResult", fix: "CONTINUE"},
		{name: "duplicate names", patch: "spec: {lifecycleHooks: [" + launch + "}, " + launch + "}]}", want: "spec.lifecycleHooks[1]", fix: "Duplicate value"},
		{name: "name with a space", patch: "spec: {lifecycleHooks: [{name: 'a b', lifecycleTransition: 'autoscaling:EC2_INSTANCE_LAUNCHING'}]}", want: "spec.lifecycleHooks[0].name"},
		{name: "target without role", patch: "spec: {lifecycleHooks: [" + launch + ", notificationTargetARN: 'arn:aws:sqs:us-east-1:1:q'}]}", want: "spec.lifecycleHooks[0]", fix: "set both"},
	}
	ns := env.NewNamespace(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := fromYAML(t, bases["AWSMachinePool"])
			obj.SetNamespace(ns)
			obj.SetName(fmt.Sprintf("hooks-%d", i))
			mergePatch(t, obj.Object, tt.patch)
			err := env.Client.Create(ctx(), obj)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("want accepted, got: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("want refused with %q, got accepted", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("want refusal containing %q, got: %v", tt.want, err)
			case tt.fix != "" && !strings.Contains(err.Error(), tt.fix):
				t.Fatalf("want the refusal to say %q, got: %v", tt.fix, err)
			}
		})
	}
}
