package gcpface

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/gcpapi"
)

// machineType is a machine type the face offers.
type machineType struct {
	CPUs     int32
	MemoryMB int32
	// NotIn are the zones that do not offer it.
	NotIn []string
}

// MachineTypes are the machine types every zone offers, but for their
// NotIn zones: c3-standard-4 is not offered in us-central1-f nor
// europe-west1-d (a zone without the type).
var MachineTypes = map[string]machineType{
	"e2-medium":     {CPUs: 2, MemoryMB: 4096},
	"e2-standard-2": {CPUs: 2, MemoryMB: 8192},
	"e2-standard-4": {CPUs: 4, MemoryMB: 16384},
	"e2-standard-8": {CPUs: 8, MemoryMB: 32768},
	"n1-standard-1": {CPUs: 1, MemoryMB: 3840},
	"n1-standard-2": {CPUs: 2, MemoryMB: 7680},
	"n1-standard-4": {CPUs: 4, MemoryMB: 15360},
	"n2-standard-2": {CPUs: 2, MemoryMB: 8192},
	"n2-standard-4": {CPUs: 4, MemoryMB: 16384},
	"n2-standard-8": {CPUs: 8, MemoryMB: 32768},
	"c3-standard-4": {CPUs: 4, MemoryMB: 16384, NotIn: []string{"us-central1-f", "europe-west1-d"}},
}

// Regions are the regions the face serves, with their zones.
var Regions = map[string][]string{
	"us-central1":  {"us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"},
	"us-east1":     {"us-east1-b", "us-east1-c", "us-east1-d"},
	"us-west1":     {"us-west1-a", "us-west1-b", "us-west1-c"},
	"europe-west1": {"europe-west1-b", "europe-west1-c", "europe-west1-d"},
}

func knownZone(zone string) bool { return slices.Contains(Regions[regionOf(zone)], zone) }

func offered(mt, zone string) bool {
	t, ok := MachineTypes[mt]
	return ok && !slices.Contains(t.NotIn, zone)
}

const computePath = "/compute/v1/projects/"

func (h *gcpHandler) projectURL(r *http.Request, project string) string {
	return h.baseURL(r) + computePath + project
}

func (h *gcpHandler) templateURL(r *http.Request, project, name string) string {
	return h.projectURL(r, project) + "/global/instanceTemplates/" + name
}

// lastSegment is the name a resource URL or partial URL ends with.
func lastSegment(u string) string {
	return u[strings.LastIndexByte(u, '/')+1:]
}

func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "global", "Invalid JSON payload received. "+err.Error())
		return false
	}
	return true
}

var nameRE = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)

func now(h *gcpHandler) time.Time { return h.env.Cloud.Clock().Now() }

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000-07:00") }

// operations are the face's operations by name (lost on a restart: an
// operation's name says when it is done, which is all Wait needs).
var operations sync.Map

// newOperation records an operation on target and writes it.
func (h *gcpHandler) writeOperation(w http.ResponseWriter, r *http.Request, opType, target string) {
	start := now(h)
	done := start.Add(h.face.operationDelay())
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := fmt.Sprintf("operation-%d-%d-%s", start.UnixMilli(), done.UnixMilli(), hex.EncodeToString(b))
	op := gcpapi.Operation{Kind: gcpapi.KindOperation, ID: strconv.FormatInt(start.UnixNano()>>1, 10), Name: name,
		OperationType: opType, TargetLink: target, User: "mpool@mpool-sim.iam.gserviceaccount.com",
		InsertTime: timestamp(start), StartTime: timestamp(start)}
	project := r.PathValue("project")
	switch r.PathValue("where") {
	case "zones":
		op.Zone = h.projectURL(r, project) + "/zones/" + r.PathValue("location")
		op.SelfLink = op.Zone + "/operations/" + name
	case "regions":
		op.Region = h.projectURL(r, project) + "/regions/" + r.PathValue("location")
		op.SelfLink = op.Region + "/operations/" + name
	default:
		op.SelfLink = h.projectURL(r, project) + "/global/operations/" + name
	}
	operations.Store(name, op)
	h.recordOperation(r, op)
	admin.WriteJSON(w, http.StatusOK, h.operationAt(op, now(h)))
}

// operationAt is op as of t: DONE once its time has come.
func (h *gcpHandler) operationAt(op gcpapi.Operation, t time.Time) gcpapi.Operation {
	if done, ok := doneAt(op.Name); ok && !t.Before(done) {
		op.Status, op.Progress, op.EndTime = gcpapi.OperationDone, 100, timestamp(done)
	} else {
		op.Status, op.Progress = gcpapi.OperationRunning, 0
	}
	return op
}

// doneAt is when the operation name completes.
func doneAt(name string) (time.Time, bool) {
	parts := strings.Split(name, "-")
	if len(parts) != 4 || parts[0] != "operation" {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

func (h *gcpHandler) lookupOperation(w http.ResponseWriter, r *http.Request) (gcpapi.Operation, bool) {
	name := r.PathValue("name")
	if v, ok := operations.Load(name); ok {
		return v.(gcpapi.Operation), true
	}
	if _, ok := doneAt(name); ok {
		return gcpapi.Operation{Kind: gcpapi.KindOperation, Name: name, SelfLink: h.baseURL(r) + r.URL.Path}, true
	}
	writeError(w, http.StatusNotFound, gcpapi.ReasonNotFound, "", fmt.Sprintf("The resource 'projects/%s/%s/operations/%s' was not found", r.PathValue("project"), r.PathValue("where"), name))
	return gcpapi.Operation{}, false
}

func (h *gcpHandler) getOperation(w http.ResponseWriter, r *http.Request) {
	if op, ok := h.lookupOperation(w, r); ok {
		admin.WriteJSON(w, http.StatusOK, h.operationAt(op, now(h)))
	}
}

// waitOperation waits until the operation is done, at most two minutes.
func (h *gcpHandler) waitOperation(w http.ResponseWriter, r *http.Request) {
	op, ok := h.lookupOperation(w, r)
	if !ok {
		return
	}
	if done, ok := doneAt(op.Name); ok {
		if d := done.Sub(now(h)); d > 0 {
			t := time.NewTimer(min(d, 2*time.Minute))
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
		}
	}
	admin.WriteJSON(w, http.StatusOK, h.operationAt(op, now(h)))
}

// --- instance templates ---

func (h *gcpHandler) insertTemplate(w http.ResponseWriter, r *http.Request) {
	var raw map[string]any
	if !readBody(w, r, &raw) {
		return
	}
	b, _ := json.Marshal(raw)
	var t gcpapi.InstanceTemplate
	_ = json.Unmarshal(b, &t)
	project := r.PathValue("project")
	switch {
	case !nameRE.MatchString(t.Name):
		writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf("Invalid value for field 'resource.name': '%s'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'", t.Name))
		return
	case t.Properties == nil || t.Properties.MachineType == "":
		writeError(w, http.StatusBadRequest, gcpapi.ReasonRequired, "", "Required field 'resource.properties.machineType' not specified")
		return
	case strings.Contains(t.Properties.MachineType, "/"):
		writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf("Invalid value for field 'resource.properties.machineType': '%s'. Instance templates take a machine type name, not a URL.", t.Properties.MachineType))
		return
	}
	key := project + "/" + t.Name
	link := h.templateURL(r, project, t.Name)
	exists := false
	_, err := updateData(h.env.Cloud, func(d *faceData) error {
		if _, ok := d.Templates[key]; ok {
			exists = true
			return nil
		}
		d.Seq++
		raw["kind"], raw["id"], raw["selfLink"] = gcpapi.KindInstanceTemplate, strconv.FormatUint(5000000000000000000+d.Seq, 10), link
		raw["creationTimestamp"] = timestamp(now(h))
		if d.Templates == nil {
			d.Templates = map[string]json.RawMessage{}
		}
		d.Templates[key], _ = json.Marshal(raw)
		return nil
	})
	switch {
	case err != nil:
		writeCloudError(w, err, key)
	case exists:
		writeError(w, http.StatusConflict, gcpapi.ReasonAlreadyExists, "", fmt.Sprintf("The resource 'projects/%s/global/instanceTemplates/%s' already exists", project, t.Name))
	default:
		h.writeOperation(w, r, "insert", link)
	}
}

// template returns the stored template of project named name.
func (h *gcpHandler) template(project, name string) (json.RawMessage, gcpapi.InstanceTemplate, bool) {
	raw, ok := readData(h.env.Cloud).Templates[project+"/"+name]
	return raw, core.DecodePayload[gcpapi.InstanceTemplate](raw), ok
}

func templateNotFound(w http.ResponseWriter, project, name string) {
	writeError(w, http.StatusNotFound, gcpapi.ReasonNotFound, "", fmt.Sprintf("The resource 'projects/%s/global/instanceTemplates/%s' was not found", project, name))
}

func (h *gcpHandler) getTemplate(w http.ResponseWriter, r *http.Request) {
	raw, _, ok := h.template(r.PathValue("project"), r.PathValue("name"))
	if !ok {
		templateNotFound(w, r.PathValue("project"), r.PathValue("name"))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(raw)
}

// filterRE reads a list filter of the form `name eq "<RE2>"` (or
// `name = "<glob>"` with a trailing *), nil for none.
func filterRE(f string) (*regexp.Regexp, error) {
	f = strings.TrimSpace(f)
	if f == "" {
		return nil, nil
	}
	if v, ok := strings.CutPrefix(f, "name eq "); ok {
		return regexp.Compile("^(?:" + strings.Trim(v, `"'`) + ")$")
	}
	if v, ok := strings.CutPrefix(f, "name = "); ok {
		v = strings.Trim(v, `"'`)
		return regexp.Compile("^" + strings.ReplaceAll(regexp.QuoteMeta(v), `\*`, ".*") + "$")
	}
	return nil, fmt.Errorf("Invalid list filter expression '%s'.", f)
}

// page is the [from, to) range of n items a request's maxResults (at most
// 500, the default) and pageToken select, and the next token.
func page(r *http.Request, n int) (int, int, string) {
	size := 500
	if v, err := strconv.Atoi(r.URL.Query().Get("maxResults")); err == nil && v > 0 && v < size {
		size = v
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
	from = min(max(from, 0), n)
	to := min(from+size, n)
	next := ""
	if to < n {
		next = strconv.Itoa(to)
	}
	return from, to, next
}

func (h *gcpHandler) listTemplates(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("project")
	re, err := filterRE(r.URL.Query().Get("filter"))
	if err != nil {
		writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", err.Error())
		return
	}
	d := readData(h.env.Cloud)
	var names []string
	for k := range d.Templates {
		p, name, _ := strings.Cut(k, "/")
		if p == project && (re == nil || re.MatchString(name)) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	from, to, next := page(r, len(names))
	out := gcpapi.InstanceTemplateList{Kind: gcpapi.KindInstanceTemplateList, Items: []map[string]any{}, NextPageToken: next,
		SelfLink: h.projectURL(r, project) + "/global/instanceTemplates"}
	for _, n := range names[from:to] {
		out.Items = append(out.Items, core.DecodePayload[map[string]any](d.Templates[project+"/"+n]))
	}
	admin.WriteJSON(w, http.StatusOK, out)
}

func (h *gcpHandler) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	project, name := r.PathValue("project"), r.PathValue("name")
	if _, _, ok := h.template(project, name); !ok {
		templateNotFound(w, project, name)
		return
	}
	for _, g := range h.groupsOf(project) {
		if p := payloadOf(g); p.Template == name {
			writeError(w, http.StatusBadRequest, gcpapi.ReasonResourceInUse, "", fmt.Sprintf(
				"The instance_template resource 'projects/%s/global/instanceTemplates/%s' is already being used by '%s'", project, name, igmPath(p)))
			return
		}
	}
	if _, err := updateData(h.env.Cloud, func(d *faceData) error {
		delete(d.Templates, project+"/"+name)
		return nil
	}); err != nil {
		writeCloudError(w, err, name)
		return
	}
	h.writeOperation(w, r, "delete", h.templateURL(r, project, name))
}

// --- instance group managers ---

func payloadOf(g *core.Group) groupPayload { return core.DecodePayload[groupPayload](g.Payload) }

// igmWritten answers a write to the group p describes: err as Compute
// Engine's error on it, else the operation of kind on it.
func (h *gcpHandler) igmWritten(w http.ResponseWriter, r *http.Request, p groupPayload, kind string, err error) {
	if err != nil {
		writeCloudError(w, err, igmPath(p))
		return
	}
	h.writeOperation(w, r, kind, h.igmURL(r, p.Name))
}

func igmPath(p groupPayload) string {
	if p.Zone != "" {
		return "projects/" + p.Project + "/zones/" + p.Zone + "/instanceGroupManagers/" + p.Name
	}
	return "projects/" + p.Project + "/regions/" + p.Region + "/instanceGroupManagers/" + p.Name
}

// groupsOf returns the groups of project.
func (h *gcpHandler) groupsOf(project string) []*core.Group {
	var out []*core.Group
	for _, k := range h.env.Cloud.Groups() {
		if k.Face != GCPFaceName || !strings.HasPrefix(k.Scope, project+"/") {
			continue
		}
		if g, err := h.env.Cloud.Scope(k.Face, k.Scope).GetGroup(k.Name); err == nil {
			out = append(out, g)
		}
	}
	return out
}

func (h *gcpHandler) scope(r *http.Request) core.Scope {
	return h.env.Cloud.Scope(GCPFaceName, GCPScope(r.PathValue("project"), r.PathValue("location")))
}

func (h *gcpHandler) igmURL(r *http.Request, name string) string {
	return h.projectURL(r, r.PathValue("project")) + "/" + r.PathValue("where") + "/" + r.PathValue("location") + "/instanceGroupManagers/" + name
}

// checkLocation answers 404 for an unknown zone or region.
func (h *gcpHandler) checkLocation(w http.ResponseWriter, r *http.Request) bool {
	loc := r.PathValue("location")
	if (r.PathValue("where") == "zones" && knownZone(loc)) || (r.PathValue("where") == "regions" && Regions[loc] != nil) {
		return true
	}
	writeError(w, http.StatusNotFound, gcpapi.ReasonNotFound, "", fmt.Sprintf("The resource 'projects/%s/%s/%s' was not found", r.PathValue("project"), r.PathValue("where"), loc))
	return false
}

// modelOf is the core model of a group of zones using template t.
func modelOf(t gcpapi.InstanceTemplate, zones []string) core.Model {
	p := t.Properties
	m := core.Model{InstanceType: p.MachineType, Zones: slices.Clone(zones), Tags: p.Labels, Extra: map[string]string{}}
	if mt, ok := MachineTypes[p.MachineType]; ok {
		m.Extra[core.ExtraCPU] = strconv.Itoa(int(mt.CPUs))
		m.Extra[core.ExtraMemory] = strconv.Itoa(int(mt.MemoryMB)) + "Mi"
	}
	for _, d := range p.Disks {
		if d.Boot && d.InitializeParams != nil {
			m.Image = d.InitializeParams.SourceImage
		}
	}
	if p.Metadata != nil {
		for _, it := range p.Metadata.Items {
			if it.Key == "user-data" && it.Value != nil {
				m.CustomData = []byte(*it.Value)
			}
		}
	}
	if v := kubernetesVersion(p.Labels[LabelKubernetesVersion]); v != "" {
		m.Extra[core.ExtraVersion] = v
	} else if v := kubernetesVersion(lastSegment(m.Image)); v != "" {
		m.Extra[core.ExtraVersion] = v
	}
	return m
}

var versionRE = regexp.MustCompile(`v(\d+)-(\d+)-(\d+)`)

// kubernetesVersion reads v1-30-4 (in a label or an image name) as v1.30.4.
func kubernetesVersion(s string) string {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return "v" + m[1] + "." + m[2] + "." + m[3]
}

// checkTemplate answers 400 when a zone of the group does not offer the
// template's machine type.
func checkTemplate(w http.ResponseWriter, t gcpapi.InstanceTemplate, zones []string) bool {
	for _, z := range zones {
		if !offered(t.Properties.MachineType, z) {
			writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf(
				"Invalid value for field 'resource.instanceTemplate': '%s'. Machine type with name '%s' does not exist in zone '%s'.",
				t.Name, t.Properties.MachineType, z))
			return false
		}
	}
	return true
}

// checkCPUQuota answers 403 quotaExceeded when capacity instances of
// machine type mt in the group name would exceed the project's CPUS quota
// in region.
func (h *gcpHandler) checkCPUQuota(w http.ResponseWriter, project, region, name, mt string, capacity int32) bool {
	if h.face.CPUQuota <= 0 {
		return true
	}
	used := 0
	for _, g := range h.groupsOf(project) {
		p := payloadOf(g)
		if p.Name == name || (p.Region != region && regionOf(p.Zone) != region) {
			continue
		}
		used += int(g.Capacity) * int(MachineTypes[g.Model.InstanceType].CPUs)
	}
	want := used + int(capacity)*int(MachineTypes[mt].CPUs)
	if want <= h.face.CPUQuota {
		return true
	}
	writeError(w, http.StatusForbidden, gcpapi.ReasonQuotaExceeded, "usageLimits", fmt.Sprintf(
		"Quota 'CPUS' exceeded. Limit: %d.0 in region %s. (%d vCPUs in use, %d requested)", h.face.CPUQuota, region, used, want-used))
	return false
}

func (h *gcpHandler) insertIGM(w http.ResponseWriter, r *http.Request) {
	if !h.checkLocation(w, r) {
		return
	}
	var in gcpapi.InstanceGroupManager
	if !readBody(w, r, &in) {
		return
	}
	project, loc := r.PathValue("project"), r.PathValue("location")
	p := groupPayload{Name: in.Name, Project: project, BaseInstanceName: in.BaseInstanceName, Template: lastSegment(in.InstanceTemplate),
		Description: in.Description, UpdatePolicy: in.UpdatePolicy, Created: now(h)}
	if r.PathValue("where") == "zones" {
		p.Zone, p.Zones = loc, []string{loc}
	} else {
		p.Region = loc
		if in.DistributionPolicy != nil {
			for _, z := range in.DistributionPolicy.Zones {
				p.Zones = append(p.Zones, lastSegment(z.Zone))
			}
		}
		if len(p.Zones) == 0 {
			p.Zones = Regions[loc][:min(3, len(Regions[loc]))]
		}
		for _, z := range p.Zones {
			if regionOf(z) != loc || !knownZone(z) {
				writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf("Invalid value for field 'resource.distributionPolicy.zones[].zone': '%s'. Zone must be in region %s.", z, loc))
				return
			}
		}
	}
	if p.BaseInstanceName == "" {
		p.BaseInstanceName = in.Name
	}
	switch {
	case !nameRE.MatchString(in.Name):
		writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf("Invalid value for field 'resource.name': '%s'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'", in.Name))
		return
	case len(p.BaseInstanceName) > 58:
		writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf("Invalid value for field 'resource.baseInstanceName': '%s'. Must be at most 58 characters.", p.BaseInstanceName))
		return
	case in.TargetSize == nil || *in.TargetSize < 0:
		writeError(w, http.StatusBadRequest, gcpapi.ReasonRequired, "", "Required field 'resource.targetSize' not specified")
		return
	}
	_, t, ok := h.template(project, p.Template)
	if !ok {
		templateNotFound(w, project, p.Template)
		return
	}
	if !checkTemplate(w, t, p.Zones) || !h.checkCPUQuota(w, project, regionOf(p.Zones[0]), in.Name, t.Properties.MachineType, *in.TargetSize) {
		return
	}
	sc := h.scope(r)
	if _, err := sc.GetGroup(in.Name); err == nil {
		writeError(w, http.StatusConflict, gcpapi.ReasonAlreadyExists, "", fmt.Sprintf("The resource '%s' already exists", igmPath(p)))
		return
	}
	d, err := updateData(h.env.Cloud, func(d *faceData) error { d.Seq++; return nil })
	if err != nil {
		writeCloudError(w, err, igmPath(p))
		return
	}
	p.ID = strconv.FormatUint(6000000000000000000+d.Seq, 10)
	payload, _ := json.Marshal(p)
	_, err = sc.ApplyGroup(in.Name, core.GroupSpec{Capacity: *in.TargetSize, ModelHash: p.Template, Model: modelOf(t, p.Zones), Payload: payload})
	h.igmWritten(w, r, p, "insert", err)
}

// group returns the group of the request's name, answering 404 when there
// is none.
func (h *gcpHandler) group(w http.ResponseWriter, r *http.Request) (*core.Group, bool) {
	if !h.checkLocation(w, r) {
		return nil, false
	}
	g, err := h.scope(r).GetGroup(r.PathValue("name"))
	if err != nil {
		writeCloudError(w, err, "projects/"+r.PathValue("project")+"/"+r.PathValue("where")+"/"+r.PathValue("location")+"/instanceGroupManagers/"+r.PathValue("name"))
		return nil, false
	}
	return g, true
}

// groupBody is the group a request names and the request's body; false
// when either was answered with an error.
func groupBody[T any](h *gcpHandler, w http.ResponseWriter, r *http.Request) (*core.Group, T, bool) {
	var req T
	g, ok := h.group(w, r)
	if !ok || !readBody(w, r, &req) {
		return nil, req, false
	}
	return g, req, true
}

func (h *gcpHandler) getIGM(w http.ResponseWriter, r *http.Request) {
	g, ok := h.group(w, r)
	if !ok {
		return
	}
	p := payloadOf(g)
	size := g.Capacity
	ca := gcpapi.CurrentActionsSummary{}
	reached := true
	for _, in := range g.Instances {
		switch action, _ := actionOf(in); action {
		case gcpapi.ActionCreating:
			ca.Creating++
		case gcpapi.ActionDeleting:
			ca.Deleting++
		default:
			ca.None++
		}
		if in.State != core.StateDeleting && in.ModelHash != p.Template {
			reached = false
		}
	}
	tmpl := h.templateURL(r, p.Project, p.Template)
	out := gcpapi.InstanceGroupManager{
		Kind: gcpapi.KindInstanceGroupManager, ID: p.ID, Name: p.Name, Description: p.Description,
		InstanceTemplate: tmpl, BaseInstanceName: p.BaseInstanceName, TargetSize: &size,
		CreationTimestamp: timestamp(p.Created), SelfLink: h.igmURL(r, p.Name), Fingerprint: h.fingerprint(r, g),
		CurrentActions: &ca, UpdatePolicy: p.UpdatePolicy,
		Status:   &gcpapi.IGMStatus{IsStable: ca.Creating == 0 && ca.Deleting == 0, VersionTarget: &gcpapi.IGMStatusVersionTarget{IsReached: reached}, Stateful: &gcpapi.IGMStatusStateful{}},
		Versions: []gcpapi.InstanceGroupVersion{{InstanceTemplate: tmpl}},
	}
	out.InstanceGroup = strings.Replace(out.SelfLink, "/instanceGroupManagers/", "/instanceGroups/", 1)
	if p.Zone != "" {
		out.Zone = h.projectURL(r, p.Project) + "/zones/" + p.Zone
	} else {
		out.Region = h.projectURL(r, p.Project) + "/regions/" + p.Region
		out.DistributionPolicy = &gcpapi.DistributionPolicy{TargetShape: "EVEN"}
		for _, z := range p.Zones {
			out.DistributionPolicy.Zones = append(out.DistributionPolicy.Zones, gcpapi.ZoneConfig{Zone: h.projectURL(r, p.Project) + "/zones/" + z})
		}
	}
	admin.WriteJSON(w, http.StatusOK, out)
}

func (h *gcpHandler) deleteIGM(w http.ResponseWriter, r *http.Request) {
	g, ok := h.group(w, r)
	if !ok {
		return
	}
	_, err := h.scope(r).DeleteGroup(g.Name)
	h.igmWritten(w, r, payloadOf(g), "delete", err)
}

func (h *gcpHandler) resizeIGM(w http.ResponseWriter, r *http.Request) {
	g, ok := h.group(w, r)
	if !ok {
		return
	}
	size, err := strconv.ParseInt(r.URL.Query().Get("size"), 10, 32)
	if err != nil || size < 0 {
		writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf("Invalid value for field 'size': '%s'. Must be greater than or equal to 0.", r.URL.Query().Get("size")))
		return
	}
	p := payloadOf(g)
	if !h.checkCPUQuota(w, p.Project, regionOf(p.Zones[0]), p.Name, g.Model.InstanceType, int32(size)) {
		return
	}
	_, err = h.scope(r).SetCapacity(g.Name, int32(size))
	h.igmWritten(w, r, p, "compute.instanceGroupManagers.resize", err)
}

func (h *gcpHandler) setInstanceTemplate(w http.ResponseWriter, r *http.Request) {
	g, req, ok := groupBody[gcpapi.SetInstanceTemplateRequest](h, w, r)
	if !ok {
		return
	}
	p := payloadOf(g)
	name := lastSegment(req.InstanceTemplate)
	_, t, found := h.template(p.Project, name)
	if !found {
		templateNotFound(w, p.Project, name)
		return
	}
	if !checkTemplate(w, t, p.Zones) || !h.checkCPUQuota(w, p.Project, regionOf(p.Zones[0]), p.Name, t.Properties.MachineType, g.Capacity) {
		return
	}
	p.Template = name
	payload, _ := json.Marshal(p)
	_, err := h.scope(r).ApplyGroup(g.Name, core.GroupSpec{Capacity: g.Capacity, ModelHash: name, Model: modelOf(t, p.Zones), Payload: payload})
	h.igmWritten(w, r, p, "compute.instanceGroupManagers.setInstanceTemplate", err)
}

func (h *gcpHandler) deleteInstances(w http.ResponseWriter, r *http.Request) {
	g, req, ok := groupBody[gcpapi.DeleteInstancesRequest](h, w, r)
	if !ok {
		return
	}
	var ids []string
	for _, u := range req.Instances {
		name := lastSegment(u)
		member := slices.ContainsFunc(g.Instances, func(in core.Instance) bool { return in.ID == name })
		if !member && !req.SkipInstancesOnValidationError {
			writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", fmt.Sprintf(
				"The resource '%s' is not a member of the instance group '%s'", u, igmPath(payloadOf(g))))
			return
		}
		if member {
			ids = append(ids, name)
		}
	}
	var err error
	if len(ids) > 0 {
		_, err = h.scope(r).DeleteInstances(g.Name, ids)
	}
	h.igmWritten(w, r, payloadOf(g), "compute.instanceGroupManagers.deleteInstances", err)
}

// actionOf is a managed instance's current action and instance status.
func actionOf(in core.Instance) (string, string) {
	switch in.State {
	case core.StateCreating:
		return gcpapi.ActionCreating, gcpapi.StatusProvision
	case core.StateBooting:
		return gcpapi.ActionNone, gcpapi.StatusStaging
	case core.StateFailed:
		return gcpapi.ActionNone, gcpapi.StatusTerminated
	case core.StateDeleting:
		return gcpapi.ActionDeleting, gcpapi.StatusStopping
	default:
		return gcpapi.ActionNone, gcpapi.StatusRunning
	}
}

func (h *gcpHandler) listManagedInstances(w http.ResponseWriter, r *http.Request) {
	g, ok := h.group(w, r)
	if !ok {
		return
	}
	p := payloadOf(g)
	from, to, next := page(r, len(g.Instances))
	out := gcpapi.ListManagedInstancesResponse{NextPageToken: next, ManagedInstances: []gcpapi.ManagedInstance{}}
	for _, in := range g.Instances[from:to] {
		ip := core.DecodePayload[instancePayload](in.Payload)
		action, status := actionOf(in)
		mi := gcpapi.ManagedInstance{
			Instance:       h.projectURL(r, p.Project) + "/zones/" + in.Zone + "/instances/" + in.ID,
			ID:             ip.ID,
			Name:           in.ID,
			InstanceStatus: status,
			CurrentAction:  action,
			Version:        &gcpapi.ManagedInstanceVersion{InstanceTemplate: h.templateURL(r, p.Project, in.ModelHash)},
		}
		if in.State == core.StateCreating {
			mi.InstanceStatus = ""
		}
		if in.State == core.StateFailed {
			msg := in.Message
			if msg == "" {
				msg = "The instance failed to start."
			}
			mi.LastAttempt = &gcpapi.ManagedInstanceLastAttempt{Errors: &gcpapi.OperationError{Errors: []gcpapi.ErrorItem{{Code: "INSTANCE_FAILED", Message: msg}}}}
		}
		out.ManagedInstances = append(out.ManagedInstances, mi)
	}
	admin.WriteJSON(w, http.StatusOK, out)
}

// --- machine types ---

func (h *gcpHandler) machineTypeOf(r *http.Request, zone, name string) gcpapi.MachineType {
	t := MachineTypes[name]
	base := h.projectURL(r, r.PathValue("project")) + "/zones/" + zone
	return gcpapi.MachineType{Kind: gcpapi.KindMachineType, ID: strconv.Itoa(1000 + int(t.CPUs)*1000 + int(t.MemoryMB/1024)), Name: name,
		Description: fmt.Sprintf("%d vCPUs, %d GB RAM", t.CPUs, t.MemoryMB/1024), GuestCPUs: t.CPUs, MemoryMB: t.MemoryMB,
		Zone: zone, SelfLink: base + "/machineTypes/" + name}
}

func (h *gcpHandler) listMachineTypes(w http.ResponseWriter, r *http.Request) {
	if !h.checkLocation(w, r) {
		return
	}
	zone := r.PathValue("location")
	var names []string
	for n := range MachineTypes {
		if offered(n, zone) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	from, to, next := page(r, len(names))
	out := gcpapi.MachineTypeList{Kind: gcpapi.KindMachineTypeList, NextPageToken: next, Items: []gcpapi.MachineType{},
		SelfLink: h.projectURL(r, r.PathValue("project")) + "/zones/" + zone + "/machineTypes"}
	for _, n := range names[from:to] {
		out.Items = append(out.Items, h.machineTypeOf(r, zone, n))
	}
	admin.WriteJSON(w, http.StatusOK, out)
}

func (h *gcpHandler) getMachineType(w http.ResponseWriter, r *http.Request) {
	if !h.checkLocation(w, r) {
		return
	}
	zone, name := r.PathValue("location"), r.PathValue("name")
	if !offered(name, zone) {
		writeError(w, http.StatusNotFound, gcpapi.ReasonNotFound, "", fmt.Sprintf("The resource 'projects/%s/zones/%s/machineTypes/%s' was not found", r.PathValue("project"), zone, name))
		return
	}
	admin.WriteJSON(w, http.StatusOK, h.machineTypeOf(r, zone, name))
}
