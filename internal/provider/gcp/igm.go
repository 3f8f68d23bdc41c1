package gcp

import (
	"context"
	"errors"

	compute "cloud.google.com/go/compute/apiv1"
	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/api/iterator"
	"k8s.io/utils/ptr"
)

// managers is the instance group manager API of both kinds of group, so
// that the ScaleGroup speaks to both alike: each call goes to the zonal
// client when location is a zone (isZone), else to the regional client
// (location a region). Writes carry a requestId (rid, see requestID).
type managers struct {
	zonal    *compute.InstanceGroupManagersClient
	regional *compute.RegionInstanceGroupManagersClient
}

// pageSize is list's page: Compute Engine's largest.
const pageSize = 500

func (m managers) get(ctx context.Context, project, location, name string) (*computepb.InstanceGroupManager, error) {
	if isZone(location) {
		return m.zonal.Get(ctx, &computepb.GetInstanceGroupManagerRequest{Project: project, Zone: location, InstanceGroupManager: name})
	}
	return m.regional.Get(ctx, &computepb.GetRegionInstanceGroupManagerRequest{Project: project, Region: location, InstanceGroupManager: name})
}

func (m managers) insert(ctx context.Context, project, location string, igm *computepb.InstanceGroupManager, rid string) error {
	if isZone(location) {
		return started(m.zonal.Insert(ctx, &computepb.InsertInstanceGroupManagerRequest{Project: project, Zone: location, InstanceGroupManagerResource: igm, RequestId: &rid}))
	}
	return started(m.regional.Insert(ctx, &computepb.InsertRegionInstanceGroupManagerRequest{Project: project, Region: location, InstanceGroupManagerResource: igm, RequestId: &rid}))
}

func (m managers) resize(ctx context.Context, project, location, name string, size int32, rid string) error {
	if isZone(location) {
		return started(m.zonal.Resize(ctx, &computepb.ResizeInstanceGroupManagerRequest{Project: project, Zone: location, InstanceGroupManager: name, Size: size, RequestId: &rid}))
	}
	return started(m.regional.Resize(ctx, &computepb.ResizeRegionInstanceGroupManagerRequest{Project: project, Region: location, InstanceGroupManager: name, Size: size, RequestId: &rid}))
}

func (m managers) setTemplate(ctx context.Context, project, location, name, template, rid string) error {
	if isZone(location) {
		return started(m.zonal.SetInstanceTemplate(ctx, &computepb.SetInstanceTemplateInstanceGroupManagerRequest{Project: project, Zone: location, InstanceGroupManager: name, RequestId: &rid,
			InstanceGroupManagersSetInstanceTemplateRequestResource: &computepb.InstanceGroupManagersSetInstanceTemplateRequest{InstanceTemplate: &template}}))
	}
	return started(m.regional.SetInstanceTemplate(ctx, &computepb.SetInstanceTemplateRegionInstanceGroupManagerRequest{Project: project, Region: location, InstanceGroupManager: name, RequestId: &rid,
		RegionInstanceGroupManagersSetTemplateRequestResource: &computepb.RegionInstanceGroupManagersSetTemplateRequest{InstanceTemplate: &template}}))
}

func (m managers) deleteInstances(ctx context.Context, project, location, name string, urls []string, rid string) error {
	if isZone(location) {
		return started(m.zonal.DeleteInstances(ctx, &computepb.DeleteInstancesInstanceGroupManagerRequest{Project: project, Zone: location, InstanceGroupManager: name, RequestId: &rid,
			InstanceGroupManagersDeleteInstancesRequestResource: &computepb.InstanceGroupManagersDeleteInstancesRequest{Instances: urls, SkipInstancesOnValidationError: ptr.To(true)}}))
	}
	return started(m.regional.DeleteInstances(ctx, &computepb.DeleteInstancesRegionInstanceGroupManagerRequest{Project: project, Region: location, InstanceGroupManager: name, RequestId: &rid,
		RegionInstanceGroupManagersDeleteInstancesRequestResource: &computepb.RegionInstanceGroupManagersDeleteInstancesRequest{Instances: urls, SkipInstancesOnValidationError: ptr.To(true)}}))
}

func (m managers) list(ctx context.Context, project, location, name string) ([]*computepb.ManagedInstance, error) {
	if isZone(location) {
		return all(m.zonal.ListManagedInstances(ctx, &computepb.ListManagedInstancesInstanceGroupManagersRequest{Project: project, Zone: location, InstanceGroupManager: name, MaxResults: ptr.To[uint32](pageSize)}))
	}
	return all(m.regional.ListManagedInstances(ctx, &computepb.ListManagedInstancesRegionInstanceGroupManagersRequest{Project: project, Region: location, InstanceGroupManager: name, MaxResults: ptr.To[uint32](pageSize)}))
}

func (m managers) delete(ctx context.Context, project, location, name string) error {
	if isZone(location) {
		return started(m.zonal.Delete(ctx, &computepb.DeleteInstanceGroupManagerRequest{Project: project, Zone: location, InstanceGroupManager: name}))
	}
	return started(m.regional.Delete(ctx, &computepb.DeleteRegionInstanceGroupManagerRequest{Project: project, Region: location, InstanceGroupManager: name}))
}

// started is the error of a write that Compute Engine accepted as an
// operation: the ScaleGroup does not wait for the operation (Get reports
// the group's progress).
func started(_ *compute.Operation, err error) error { return err }

// all reads every page of it: a Compute Engine list iterator of any kind.
func all[T any](it interface{ Next() (T, error) }) ([]T, error) {
	var out []T
	for {
		v, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}
