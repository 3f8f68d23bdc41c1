package core

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// stateVersion is the schema version of the state file. Version 1 (before
// faces) had the local face's groups only, in a map by name; it is read and
// upgraded.
const stateVersion = 2

// stateFile is the state file's name in the data directory.
const stateFile = "state.json"

// cloudState is everything the cloud persists. Times are absolute, so a
// restarted cloud resumes booting instances where they were.
type cloudState struct {
	// NextSeq is the last instance sequence number handed out; instance IDs
	// derive from it and never repeat, even across restarts.
	NextSeq uint64
	// NextOp is the last operation number handed out.
	NextOp uint64
	Groups map[GroupKey]*groupState
	// FaceData is each face's own opaque data, by face name.
	FaceData map[string]json.RawMessage
	// facesEnc is FaceData's encoding in the state file, kept until the
	// data changes (nil then): a face's data can be megabytes (the AWS
	// face's launch templates and scaling activities), and encoding it
	// again validates and compacts every byte of every flush.
	facesEnc []byte
	// FaceRecords are the faces' keyed records (Cloud.UpdateFaceRecord),
	// by face and key: data a face keeps per object (a launch template, a
	// group's activities), each read and changed alone.
	FaceRecords map[string]map[string]json.RawMessage
	// recordsEnc is FaceRecords' encoding in the state file, kept until a
	// record changes (nil then).
	recordsEnc []byte
}

// stateFileV2 is the state file: groups in a list sorted by key.
type stateFileV2 struct {
	Version  int                        `json:"version"`
	NextSeq  uint64                     `json:"nextSeq"`
	NextOp   uint64                     `json:"nextOp"`
	Groups   []*groupState              `json:"groups"`
	FaceData map[string]json.RawMessage `json:"faceData,omitempty"`
	// FaceRecords are the faces' records by face and key.
	FaceRecords map[string]map[string]json.RawMessage `json:"faceRecords,omitempty"`
}

// stateFileV1 is the state file before faces: the local face's groups by
// name.
type stateFileV1 struct {
	NextSeq uint64                 `json:"nextSeq"`
	NextOp  uint64                 `json:"nextOp"`
	Groups  map[string]*groupState `json:"groups"`
}

type groupState struct {
	// Face, Scope and Name are the group's key.
	Face       string     `json:"face"`
	Scope      string     `json:"scope,omitempty"`
	Name       string     `json:"name"`
	Capacity   int32      `json:"capacity"`
	ModelHash  string     `json:"modelHash,omitempty"`
	ModelRef   string     `json:"modelRef"`
	Simulation Simulation `json:"simulation"`
	CreatedAt  time.Time  `json:"createdAt"`
	Deleting   bool       `json:"deleting,omitempty"`
	// Created counts the instances the group ever created
	// (NewInstance.Ordinal); older state files start it at the number of
	// instances listed.
	Created uint64 `json:"created,omitempty"`
	// WrongTokens counts down the next instances that boot with a wrong
	// bootstrap token (GroupFaults).
	WrongTokens int `json:"wrongTokens,omitempty"`
	// NeverJoins counts down the next instances created with
	// FaultNeverJoins (GroupFaults).
	NeverJoins int        `json:"neverJoins,omitempty"`
	Operation  *Operation `json:"operation,omitempty"`
	// Models holds every model an instance still references (a VM keeps the
	// custom data it was created with), by content key.
	Models map[string]*Model `json:"models"`
	// Payload is the face's opaque data about the group.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Instances are in creation order (by Seq).
	Instances []*instanceState `json:"instances"`

	// next is the time of the group's next due transition; zero when at rest.
	next time.Time
	// index finds instances by ID; built on first use.
	index map[string]*instanceState
	// enc is the group's encoding in the state file, kept between flushes
	// until the group changes (Cloud.changed): a flush re-encodes only the
	// groups that changed since the last, where encoding all of them, a
	// thousand groups' worth while one pool scales, took a tenth of the
	// simulator's CPU and held the cloud's lock for it.
	enc json.RawMessage
}

type instanceState struct {
	ID string `json:"id"`
	// Seq orders instances (creation order).
	Seq         uint64        `json:"seq"`
	ProviderID  string        `json:"providerID,omitempty"`
	Hostname    string        `json:"hostname"`
	PrivateIP   string        `json:"privateIP"`
	Zone        string        `json:"zone,omitempty"`
	State       InstanceState `json:"state"`
	CreatedAt   time.Time     `json:"createdAt"`
	ProvisionAt time.Time     `json:"provisionAt"`
	BootAt      time.Time     `json:"bootAt"`
	DeleteAt    time.Time     `json:"deleteAt,omitzero"`
	ModelHash   string        `json:"modelHash,omitempty"`
	ModelRef    string        `json:"modelRef"`
	Message     string        `json:"message,omitempty"`
	Join        JoinPhase     `json:"join,omitempty"`
	NodeName    string        `json:"nodeName,omitempty"`
	Endpoint    string        `json:"endpoint,omitempty"`
	WrongToken  bool          `json:"wrongToken,omitempty"`
	// Held keeps the instance Creating until its face releases it.
	Held bool `json:"held,omitempty"`
	// Fault is the instance's health fault, set at FaultSince.
	Fault      InstanceFault `json:"fault,omitempty"`
	FaultSince time.Time     `json:"faultSince,omitzero"`
	// Metadata are the keys of the instance data (ds.meta_data) the face
	// chose; the core's defaults are derived on load (meta).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Payload is the face's opaque data about the instance.
	Payload json.RawMessage `json:"payload,omitempty"`

	// meta is the instance data cloud-init exposes: Metadata with the
	// core's defaults. Never changed once set: snapshots share it.
	meta map[string]string
}

func newState() *cloudState {
	return &cloudState{Groups: map[GroupKey]*groupState{}, FaceData: map[string]json.RawMessage{}, FaceRecords: map[string]map[string]json.RawMessage{}}
}

func (g *groupState) key() GroupKey { return GroupKey{Face: g.Face, Scope: g.Scope, Name: g.Name} }

// stateParts is the state file in pieces: what encodeParts takes under the
// cloud's lock (each group encoded once per change, groupState.enc), and
// join puts together after it.
type stateParts struct {
	head   []byte            // {"version":…,"nextSeq":…,"nextOp":… without the closing brace
	groups []json.RawMessage // each group's encoding, sorted by key
	faces  []byte            // the faceData object, nil when there is none
	recs   []byte            // the faceRecords object, nil when there is none
}

// encodeParts encodes what changed since the last flush and collects the
// groups' encodings. The groups' bytes are json.Marshal's output, compact
// and valid, so join copies them as they are: marshalling them again as
// json.RawMessage would validate and compact the whole state each time
// (at 10,000 instances most of a flush, with the lock held).
func (st *cloudState) encodeParts() (stateParts, error) {
	groups := make([]*groupState, 0, len(st.Groups))
	for _, g := range st.Groups {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].key().less(groups[j].key()) })
	head, err := json.Marshal(struct {
		Version int    `json:"version"`
		NextSeq uint64 `json:"nextSeq"`
		NextOp  uint64 `json:"nextOp"`
	}{Version: stateVersion, NextSeq: st.NextSeq, NextOp: st.NextOp})
	if err != nil {
		return stateParts{}, err
	}
	p := stateParts{head: head[:len(head)-1], groups: make([]json.RawMessage, len(groups))}
	for i, g := range groups {
		if g.enc == nil {
			b, err := json.Marshal(g)
			if err != nil {
				return stateParts{}, err
			}
			g.enc = b
		}
		p.groups[i] = g.enc
	}
	if len(st.FaceData) > 0 {
		if st.facesEnc == nil {
			if st.facesEnc, err = json.Marshal(st.FaceData); err != nil {
				return stateParts{}, err
			}
		}
		p.faces = st.facesEnc
	}
	if len(st.FaceRecords) > 0 {
		if st.recordsEnc == nil {
			st.recordsEnc = encodeRecords(st.FaceRecords)
		}
		p.recs = st.recordsEnc
	}
	return p, nil
}

// encodeRecords is json.Marshal's encoding of recs, its keys sorted, with
// the records copied as they are (each is compact JSON, UpdateFaceRecord):
// marshalling them as json.RawMessage would validate and compact them all.
func encodeRecords(recs map[string]map[string]json.RawMessage) []byte {
	var out []byte
	out = append(out, '{')
	for i, face := range slices.Sorted(maps.Keys(recs)) {
		if i > 0 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(face)
		out = append(append(out, k...), ':', '{')
		for j, key := range slices.Sorted(maps.Keys(recs[face])) {
			if j > 0 {
				out = append(out, ',')
			}
			k, _ := json.Marshal(key)
			out = append(append(out, k...), ':')
			out = append(out, recs[face][key]...)
		}
		out = append(out, '}')
	}
	return append(out, '}')
}

// join returns the state file: the same bytes as json.Marshal of a
// stateFileV2 holding the parts.
func (p stateParts) join() []byte {
	n := len(p.head) + len(p.faces) + len(p.recs) + 48
	for _, g := range p.groups {
		n += len(g) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, p.head...)
	out = append(out, `,"groups":[`...)
	for i, g := range p.groups {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, g...)
	}
	out = append(out, ']')
	if p.faces != nil {
		out = append(out, `,"faceData":`...)
		out = append(out, p.faces...)
	}
	if p.recs != nil {
		out = append(out, `,"faceRecords":`...)
		out = append(out, p.recs...)
	}
	return append(out, '}')
}

// decodeState parses a state file of any version this cloud reads.
func decodeState(b []byte) (*cloudState, error) {
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	st := newState()
	var groups []*groupState
	switch v.Version {
	case 1:
		var f stateFileV1
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		st.NextSeq, st.NextOp = f.NextSeq, f.NextOp
		for _, g := range f.Groups {
			g.Face, g.Scope = LocalFace, ""
			for _, in := range g.Instances {
				in.ProviderID = ProviderID(g.Name, in.ID)
			}
			groups = append(groups, g)
		}
	case stateVersion:
		var f stateFileV2
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		st.NextSeq, st.NextOp = f.NextSeq, f.NextOp
		groups = f.Groups
		for k, d := range f.FaceData {
			st.FaceData[k] = d
		}
		for face, recs := range f.FaceRecords {
			m := map[string]json.RawMessage{}
			for k, d := range recs {
				if len(d) > 0 {
					m[k] = compactPayload(d)
				}
			}
			if len(m) > 0 {
				st.FaceRecords[face] = m
			}
		}
	default:
		return nil, fmt.Errorf("version %d is not one of 1, %d", v.Version, stateVersion)
	}
	for _, g := range groups {
		if g == nil || g.Face == "" {
			return nil, fmt.Errorf("a group has no face")
		}
		if st.Groups[g.key()] != nil {
			return nil, fmt.Errorf("group %s is listed twice", g.key())
		}
		if g.Models == nil {
			g.Models = map[string]*Model{}
		}
		sort.Slice(g.Instances, func(i, j int) bool { return g.Instances[i].Seq < g.Instances[j].Seq })
		g.Created = max(g.Created, uint64(len(g.Instances)))
		for _, in := range g.Instances {
			in.meta = defaultMetadata(in, in.Metadata)
		}
		st.Groups[g.key()] = g
	}
	return st, nil
}

// defaultMetadata returns md (copied) with the core's keys added where the
// face set none.
func defaultMetadata(in *instanceState, md map[string]string) map[string]string {
	out := make(map[string]string, len(md)+4)
	maps.Copy(out, md)
	def := func(k, v string) {
		if _, ok := out[k]; !ok && v != "" {
			out[k] = v
		}
	}
	def(MetaInstanceID, in.ID)
	def(MetaLocalHostname, in.Hostname)
	def(MetaLocalIPv4, in.PrivateIP)
	def(MetaAvailabilityZone, in.Zone)
	return out
}

// find returns the instance with id, or nil.
func (g *groupState) find(id string) *instanceState {
	if g.index == nil {
		g.index = make(map[string]*instanceState, len(g.Instances))
		for _, in := range g.Instances {
			g.index[in.ID] = in
		}
	}
	return g.index[id]
}

// add appends a new instance.
func (g *groupState) add(in *instanceState) {
	g.Instances = append(g.Instances, in)
	if g.index != nil {
		g.index[in.ID] = in
	}
}

// gcModels drops models no instance references, except the current one.
func (g *groupState) gcModels() {
	used := map[string]bool{g.ModelRef: true}
	for _, in := range g.Instances {
		used[in.ModelRef] = true
	}
	for k := range g.Models {
		if !used[k] {
			delete(g.Models, k)
		}
	}
}

// modelKey identifies a model by content, custom data included.
func modelKey(m *Model) string {
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func copyModel(m Model) *Model {
	out := m
	out.Zones = append([]string(nil), m.Zones...)
	out.CustomData = append([]byte(nil), m.CustomData...)
	out.Tags = copyMap(m.Tags)
	out.Extra = copyMap(m.Extra)
	return &out
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// store reads and writes the state file of a data directory.
type store struct {
	dir string
}

func (s store) path() string { return filepath.Join(s.dir, stateFile) }

// load reads the state file; a missing file is an empty cloud.
func (s store) load() (*cloudState, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory %s: %w", s.dir, err)
	}
	b, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return newState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading cloud state: %w", err)
	}
	st, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("parsing cloud state %s: %w", s.path(), err)
	}
	return st, nil
}

// write replaces the state file atomically: a crash leaves either the old or
// the new file, never a torn one.
func (s store) write(data []byte) error {
	f, err := os.CreateTemp(s.dir, stateFile+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing cloud state: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing cloud state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing cloud state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing cloud state: %w", err)
	}
	if err := os.Rename(tmp, s.path()); err != nil {
		return fmt.Errorf("replacing cloud state: %w", err)
	}
	return nil
}
