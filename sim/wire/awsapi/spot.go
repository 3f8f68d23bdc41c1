package awsapi

// MixedInstancesPolicy is an Auto Scaling group's mixed instances policy, as
// DescribeAutoScalingGroups reports it.
type MixedInstancesPolicy struct {
	LaunchTemplate        MixedLaunchTemplate    `xml:"LaunchTemplate"`
	InstancesDistribution *InstancesDistribution `xml:"InstancesDistribution,omitempty"`
}

// MixedLaunchTemplate is a mixed instances policy's launch template and
// its instance-type overrides.
type MixedLaunchTemplate struct {
	LaunchTemplateSpecification LaunchTemplateSpecification `xml:"LaunchTemplateSpecification"`
	Overrides                   []LaunchTemplateOverrides   `xml:"Overrides>member,omitempty"`
}

// LaunchTemplateOverrides is an instance type a mixed instances policy may
// launch, with the capacity units it counts for.
type LaunchTemplateOverrides struct {
	InstanceType     string `xml:"InstanceType,omitempty"`
	WeightedCapacity string `xml:"WeightedCapacity,omitempty"`
}

// InstancesDistribution splits a mixed instances policy's capacity between
// On-Demand and Spot instances.
type InstancesDistribution struct {
	OnDemandAllocationStrategy          string `xml:"OnDemandAllocationStrategy"`
	OnDemandBaseCapacity                int32  `xml:"OnDemandBaseCapacity"`
	OnDemandPercentageAboveBaseCapacity int32  `xml:"OnDemandPercentageAboveBaseCapacity"`
	SpotAllocationStrategy              string `xml:"SpotAllocationStrategy"`
	SpotInstancePools                   int32  `xml:"SpotInstancePools,omitempty"`
	SpotMaxPrice                        string `xml:"SpotMaxPrice,omitempty"`
}
