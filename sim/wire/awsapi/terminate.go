package awsapi

// InstanceStateChange is one instance's state change, as
// TerminateInstances answers it.
type InstanceStateChange struct {
	InstanceID    string        `xml:"instanceId"`
	CurrentState  InstanceState `xml:"currentState"`
	PreviousState InstanceState `xml:"previousState"`
}

// TerminateInstancesResponse is EC2 TerminateInstances' response.
type TerminateInstancesResponse struct {
	EC2Meta
	Instances []InstanceStateChange `xml:"instancesSet>item"`
}
