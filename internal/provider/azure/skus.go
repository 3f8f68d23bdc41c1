package azure

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// The smallest VM a Kubernetes node may run on, as CAPZ's webhook requires.
const (
	minVCPUs    = 2
	minMemoryGB = 2
)

// skuCacheTTL is how long the VM sizes of a location are kept: Azure's
// offer changes rarely, and the list is read only before a scale set's
// model is written.
const skuCacheTTL = time.Hour

// sku is what mpool checks of a VM size in one location.
type sku struct {
	vCPUs    float64
	memoryGB float64
	zones    []string
	// restricted says why the subscription may not use it there, "" when
	// it may.
	restricted string
}

// skuCatalog caches the VM sizes Azure offers, per subscription and
// location (one resourceSkus list each).
type skuCatalog struct {
	mu      sync.Mutex
	entries map[string]skuEntry
}

type skuEntry struct {
	at   time.Time
	skus map[string]sku // by lower-cased name
}

// check refuses a model Azure would refuse or CAPZ does not allow: a size
// the location does not offer (or not to this subscription), one smaller
// than 2 vCPUs or 2 GiB, zones the size lacks there. It reads the sizes
// of the location at most once an hour.
func (s *ScaleSets) checkSKU(ctx context.Context, c *sdkClients, subscription, location, size string, zones []string) error {
	skus, err := s.skus.get(ctx, c, subscription, location)
	if err != nil {
		return err
	}
	k, ok := skus[strings.ToLower(size)]
	switch {
	case !ok:
		return scalegroup.NewInvalid(fmt.Sprintf("SkuNotAvailable: VM size %s is not offered in location %s: change spec.template.vmSize (for example Standard_D2s_v3)", size, location))
	case k.restricted != "":
		return scalegroup.NewInvalid(fmt.Sprintf("SkuNotAvailable: VM size %s is restricted in location %s for this subscription (%s): change spec.template.vmSize or the location", size, location, k.restricted))
	case k.vCPUs < minVCPUs || k.memoryGB < minMemoryGB:
		return scalegroup.NewInvalid(fmt.Sprintf("VM size %s has %g vCPUs and %g GiB; a Kubernetes node needs at least %d vCPUs and %d GiB (as CAPZ requires): change spec.template.vmSize", size, k.vCPUs, k.memoryGB, minVCPUs, minMemoryGB))
	}
	for _, z := range zones {
		if !slices.Contains(k.zones, z) {
			return scalegroup.NewInvalid(fmt.Sprintf("VM size %s is not offered in zone %s of %s (it is in zones %s): change the MachinePool's spec.failureDomains or spec.template.vmSize", size, z, location, strings.Join(k.zones, ", ")))
		}
	}
	return nil
}

// get returns the VM sizes of a location, listing them when the cache has
// none younger than skuCacheTTL.
func (cat *skuCatalog) get(ctx context.Context, c *sdkClients, subscription, location string) (map[string]sku, error) {
	key := strings.ToLower(subscription + "/" + location)
	cat.mu.Lock()
	e, ok := cat.entries[key]
	cat.mu.Unlock()
	if ok && time.Since(e.at) < skuCacheTTL {
		return e.skus, nil
	}
	out := map[string]sku{}
	pager := c.skus.NewListPager(&armcompute.ResourceSKUsClientListOptions{Filter: to.Ptr("location eq '" + location + "'")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the VM sizes of %s: %w", location, cloudError(err, scalegroup.Ref{}))
		}
		for _, r := range page.Value {
			if r == nil || r.Name == nil || !strings.EqualFold(deref(r.ResourceType), "virtualMachines") {
				continue
			}
			k := sku{}
			for _, cp := range r.Capabilities {
				if cp == nil || cp.Name == nil || cp.Value == nil {
					continue
				}
				v, _ := strconv.ParseFloat(*cp.Value, 64)
				switch *cp.Name {
				case "vCPUs":
					k.vCPUs = v
				case "MemoryGB":
					k.memoryGB = v
				}
			}
			for _, li := range r.LocationInfo {
				if li != nil && strings.EqualFold(deref(li.Location), location) {
					for _, z := range li.Zones {
						if z != nil {
							k.zones = append(k.zones, *z)
						}
					}
				}
			}
			for _, rs := range r.Restrictions {
				if rs != nil && rs.Type != nil && *rs.Type == armcompute.ResourceSKURestrictionsTypeLocation {
					k.restricted = string(deref(rs.ReasonCode))
				}
			}
			out[strings.ToLower(*r.Name)] = k
		}
	}
	cat.mu.Lock()
	if cat.entries == nil {
		cat.entries = map[string]skuEntry{}
	}
	cat.entries[key] = skuEntry{at: time.Now(), skus: out}
	cat.mu.Unlock()
	return out, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
