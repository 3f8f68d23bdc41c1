package gcp

import (
	"context"
	"errors"

	compute "cloud.google.com/go/compute/apiv1"
	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/api/iterator"
	"k8s.io/utils/ptr"
)

// igms is the instance group manager API of one kind of group: zonal
// (location a zone) or regional (a region), so that the ScaleGroup speaks
// to both alike. Writes carry a requestId (rid, see requestID).
type igms interface {
	get(ctx context.Context, project, location, name string) (*computepb.InstanceGroupManager, error)
	insert(ctx context.Context, project, location string, igm *computepb.InstanceGroupManager, rid string) error
	resize(ctx context.Context, project, location, name string, size int32, rid string) error
	setTemplate(ctx context.Context, project, location, name, template, rid string) error
	deleteInstances(ctx context.Context, project, location, name string, urls []string, rid string) error
	list(ctx context.Context, project, location, name string) ([]*computepb.ManagedInstance, error)
	delete(ctx context.Context, project, location, name string) error
}

// pageSize is listManagedInstances's page: Compute Engine's largest.
const pageSize = 500

type zonal struct {
	c *compute.InstanceGroupManagersClient
}

func (z zonal) get(ctx context.Context, project, zone, name string) (*computepb.InstanceGroupManager, error) {
	return z.c.Get(ctx, &computepb.GetInstanceGroupManagerRequest{Project: project, Zone: zone, InstanceGroupManager: name})
}

func (z zonal) insert(ctx context.Context, project, zone string, igm *computepb.InstanceGroupManager, rid string) error {
	_, err := z.c.Insert(ctx, &computepb.InsertInstanceGroupManagerRequest{Project: project, Zone: zone, InstanceGroupManagerResource: igm, RequestId: &rid})
	return err
}

func (z zonal) resize(ctx context.Context, project, zone, name string, size int32, rid string) error {
	_, err := z.c.Resize(ctx, &computepb.ResizeInstanceGroupManagerRequest{Project: project, Zone: zone, InstanceGroupManager: name, Size: size, RequestId: &rid})
	return err
}

func (z zonal) setTemplate(ctx context.Context, project, zone, name, template, rid string) error {
	_, err := z.c.SetInstanceTemplate(ctx, &computepb.SetInstanceTemplateInstanceGroupManagerRequest{Project: project, Zone: zone, InstanceGroupManager: name, RequestId: &rid,
		InstanceGroupManagersSetInstanceTemplateRequestResource: &computepb.InstanceGroupManagersSetInstanceTemplateRequest{InstanceTemplate: &template}})
	return err
}

func (z zonal) deleteInstances(ctx context.Context, project, zone, name string, urls []string, rid string) error {
	_, err := z.c.DeleteInstances(ctx, &computepb.DeleteInstancesInstanceGroupManagerRequest{Project: project, Zone: zone, InstanceGroupManager: name, RequestId: &rid,
		InstanceGroupManagersDeleteInstancesRequestResource: &computepb.InstanceGroupManagersDeleteInstancesRequest{Instances: urls, SkipInstancesOnValidationError: ptr.To(true)}})
	return err
}

func (z zonal) list(ctx context.Context, project, zone, name string) ([]*computepb.ManagedInstance, error) {
	return all(z.c.ListManagedInstances(ctx, &computepb.ListManagedInstancesInstanceGroupManagersRequest{Project: project, Zone: zone, InstanceGroupManager: name, MaxResults: ptr.To[uint32](pageSize)}))
}

func (z zonal) delete(ctx context.Context, project, zone, name string) error {
	_, err := z.c.Delete(ctx, &computepb.DeleteInstanceGroupManagerRequest{Project: project, Zone: zone, InstanceGroupManager: name})
	return err
}

type regional struct {
	c *compute.RegionInstanceGroupManagersClient
}

func (r regional) get(ctx context.Context, project, region, name string) (*computepb.InstanceGroupManager, error) {
	return r.c.Get(ctx, &computepb.GetRegionInstanceGroupManagerRequest{Project: project, Region: region, InstanceGroupManager: name})
}

func (r regional) insert(ctx context.Context, project, region string, igm *computepb.InstanceGroupManager, rid string) error {
	_, err := r.c.Insert(ctx, &computepb.InsertRegionInstanceGroupManagerRequest{Project: project, Region: region, InstanceGroupManagerResource: igm, RequestId: &rid})
	return err
}

func (r regional) resize(ctx context.Context, project, region, name string, size int32, rid string) error {
	_, err := r.c.Resize(ctx, &computepb.ResizeRegionInstanceGroupManagerRequest{Project: project, Region: region, InstanceGroupManager: name, Size: size, RequestId: &rid})
	return err
}

func (r regional) setTemplate(ctx context.Context, project, region, name, template, rid string) error {
	_, err := r.c.SetInstanceTemplate(ctx, &computepb.SetInstanceTemplateRegionInstanceGroupManagerRequest{Project: project, Region: region, InstanceGroupManager: name, RequestId: &rid,
		RegionInstanceGroupManagersSetTemplateRequestResource: &computepb.RegionInstanceGroupManagersSetTemplateRequest{InstanceTemplate: &template}})
	return err
}

func (r regional) deleteInstances(ctx context.Context, project, region, name string, urls []string, rid string) error {
	_, err := r.c.DeleteInstances(ctx, &computepb.DeleteInstancesRegionInstanceGroupManagerRequest{Project: project, Region: region, InstanceGroupManager: name, RequestId: &rid,
		RegionInstanceGroupManagersDeleteInstancesRequestResource: &computepb.RegionInstanceGroupManagersDeleteInstancesRequest{Instances: urls, SkipInstancesOnValidationError: ptr.To(true)}})
	return err
}

func (r regional) list(ctx context.Context, project, region, name string) ([]*computepb.ManagedInstance, error) {
	return all(r.c.ListManagedInstances(ctx, &computepb.ListManagedInstancesRegionInstanceGroupManagersRequest{Project: project, Region: region, InstanceGroupManager: name, MaxResults: ptr.To[uint32](pageSize)}))
}

func (r regional) delete(ctx context.Context, project, region, name string) error {
	_, err := r.c.Delete(ctx, &computepb.DeleteRegionInstanceGroupManagerRequest{Project: project, Region: region, InstanceGroupManager: name})
	return err
}

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
