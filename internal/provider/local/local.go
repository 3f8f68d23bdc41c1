// Package local implements scalegroup.ScaleGroup for the simulated cloud
// (sim/): a plain HTTP client of its local face's JSON API (package
// sim/wire/localapi), talking real HTTP over loopback. It is a real
// provider, not a test double: the infra pool engine drives LocalMachinePools through it
// exactly as it drives Azure and AWS.
//
// # The model
//
// scalegroup.Model's common fields map onto the simulated cloud's model; its
// Version becomes the kubelet version the simulated Nodes report. The local
// provider has no provider-specific model fields (Model.Provider is nil);
// Model.InPlace may be a Simulation, the group's simulation knobs, applied
// in place without replacing instances.
//
// # Errors
//
// HTTP statuses map onto scalegroup's typed errors: 404 → NotFound (except
// for DeleteInstances and Delete, where a missing group is success), 429 →
// Throttled with the Retry-After header, 409 QuotaExceeded → QuotaExceeded,
// other 409 → Transient, 400 → Invalid, 5xx and network errors → Transient.
package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

// ProviderName labels the local provider in metrics and provider IDs.
const ProviderName = "local"

// extraVersion is the key of the local face's model "extra" map that holds
// the kubelet version simulated Nodes report (cloudsim.ExtraVersion; a test
// keeps the two equal without this package importing the simulator).
const extraVersion = "version"

// Options configure a Client.
type Options struct {
	// HTTPClient is used for requests (default: a client with a 30s timeout
	// and a connection pool sized for concurrent reconciles).
	HTTPClient *http.Client
}

// Client is a scalegroup.ScaleGroup backed by the simulated cloud at a base
// URL.
type Client struct {
	base string
	http *http.Client
}

var _ scalegroup.ScaleGroup = (*Client)(nil)

// New returns a client for the simulated cloud at baseURL (e.g.
// http://127.0.0.1:8790).
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("invalid simulated cloud URL %q", baseURL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Timeout:   30 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 90 * time.Second},
		}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: hc}, nil
}

// Get implements scalegroup.ScaleGroup.
func (c *Client) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	name := ref.Name
	var g localapi.Group
	if err := c.do(ctx, http.MethodGet, groupPath(name), nil, &g); err != nil {
		return nil, fmt.Errorf("getting scale group %s: %w", name, err)
	}
	return fromLocalGroup(&g), nil
}

// Apply implements scalegroup.ScaleGroup.
func (c *Client) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	name := ref.Name
	if ref.Scope != "" {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("the simulated cloud's local face has no scopes, got %q", ref.Scope))
	}
	body, err := toLocalSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("applying scale group %s: %w", name, err)
	}
	var g localapi.Group
	if err := c.do(ctx, http.MethodPut, groupPath(name), body, &g); err != nil {
		return nil, fmt.Errorf("applying scale group %s: %w", name, err)
	}
	return fromLocalGroup(&g), nil
}

// DeleteInstances implements scalegroup.ScaleGroup.
func (c *Client) DeleteInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	name := ref.Name
	if len(ids) == 0 {
		return nil
	}
	err := c.do(ctx, http.MethodPost, groupPath(name)+"/deleteInstances", localapi.DeleteInstancesRequest{IDs: ids}, nil)
	if err != nil && !scalegroup.IsNotFound(err) {
		return fmt.Errorf("deleting instances %v of scale group %s: %w", ids, name, err)
	}
	return nil
}

// Capabilities implements scalegroup.ScaleGroup: the simulated cloud's
// groups leave rollouts to the engine, which picks every victim.
func (c *Client) Capabilities() scalegroup.Capabilities { return scalegroup.Capabilities{} }

// Delete implements scalegroup.ScaleGroup.
func (c *Client) Delete(ctx context.Context, ref scalegroup.Ref) error {
	name := ref.Name
	err := c.do(ctx, http.MethodDelete, groupPath(name), nil, nil)
	if err != nil && !scalegroup.IsNotFound(err) {
		return fmt.Errorf("deleting scale group %s: %w", name, err)
	}
	return nil
}

func groupPath(name string) string { return "/v1/groups/" + url.PathEscape(name) }

// do sends one request and decodes a 2xx response into out; other
// responses become typed errors.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return scalegroup.NewTransient("request to the simulated cloud failed", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return scalegroup.NewTransient("reading the simulated cloud's response", err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding the simulated cloud's response: %w", err)
		}
		return nil
	}
	return responseError(resp, data)
}

// responseError maps an error response onto scalegroup's typed errors.
func responseError(resp *http.Response, data []byte) error {
	var er localapi.ErrorResponse
	_ = json.Unmarshal(data, &er)
	msg := er.Error.Message
	if msg == "" {
		msg = strings.TrimSpace(string(data))
	}
	msg = fmt.Sprintf("%s: %s", resp.Status, msg)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return &scalegroup.Error{Reason: scalegroup.ReasonNotFound, Message: msg}
	case resp.StatusCode == http.StatusTooManyRequests:
		return scalegroup.NewThrottled(msg, kit.RetryAfter(resp.Header))
	case resp.StatusCode == http.StatusConflict && er.Error.Code == localapi.CodeQuotaExceeded:
		return scalegroup.NewQuotaExceeded(msg)
	case resp.StatusCode == http.StatusConflict:
		return scalegroup.NewTransient(msg, nil)
	case resp.StatusCode == http.StatusBadRequest:
		return scalegroup.NewInvalid(msg)
	case resp.StatusCode >= 500:
		return &scalegroup.Error{Reason: scalegroup.ReasonTransient, Message: msg, RetryAfter: kit.RetryAfter(resp.Header)}
	default:
		return errors.New(msg)
	}
}

func toLocalSpec(spec scalegroup.GroupSpec) (*localapi.GroupSpec, error) {
	m := spec.Model
	if m.Provider != nil {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("the simulated cloud has no provider-specific model fields, got %T", m.Provider))
	}
	out := &localapi.GroupSpec{
		Capacity:  spec.Capacity,
		ModelHash: spec.ModelHash,
		Model: localapi.Model{
			InstanceType: m.InstanceType,
			Image:        m.Image,
			Zones:        m.Zones,
			CustomData:   m.CustomData,
			Tags:         m.Tags,
		},
	}
	if m.Version != "" {
		out.Model.Extra = map[string]string{extraVersion: m.Version}
	}
	sim, ok, err := kit.ModelPart[Simulation](m.InPlace, "the simulated cloud's in-place settings")
	if err != nil {
		return nil, err
	}
	if ok {
		out.Simulation = sim.wire()
	}
	if out.Simulation != nil && out.Simulation.FailureRate != nil {
		if f := *out.Simulation.FailureRate; f < 0 || f > 1 {
			return nil, scalegroup.NewInvalid(fmt.Sprintf("simulation failure rate %v is not within [0, 1]", f))
		}
	}
	return out, nil
}

func fromLocalGroup(g *localapi.Group) *scalegroup.Group {
	out := &scalegroup.Group{
		Name:      g.Name,
		Capacity:  g.Capacity,
		ModelHash: g.ModelHash,
		Instances: make([]scalegroup.Instance, len(g.Instances)),
	}
	if op := g.Operation; op != nil {
		out.Operation = &scalegroup.Operation{ID: op.ID, Type: op.Type, StartedAt: op.StartedAt, Message: op.Message}
	}
	for i, in := range g.Instances {
		out.Instances[i] = scalegroup.Instance{
			ID:         in.ID,
			ProviderID: in.ProviderID,
			Zone:       in.Zone,
			State:      scalegroup.InstanceState(in.State),
			CreatedAt:  in.CreatedAt,
			ModelHash:  in.ModelHash,
			Message:    in.Message,
		}
	}
	return out
}
