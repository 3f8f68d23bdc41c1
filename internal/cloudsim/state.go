package cloudsim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// stateVersion is the schema version of the state file.
const stateVersion = 1

// stateFile is the state file's name in the data directory.
const stateFile = "state.json"

// cloudState is everything the cloud persists. Times are absolute, so a
// restarted cloud resumes booting instances where they were.
type cloudState struct {
	Version int `json:"version"`
	// NextSeq is the last instance sequence number handed out; instance IDs
	// derive from it and never repeat, even across restarts.
	NextSeq uint64 `json:"nextSeq"`
	// NextOp is the last operation number handed out.
	NextOp uint64                 `json:"nextOp"`
	Groups map[string]*groupState `json:"groups"`
}

type groupState struct {
	Name       string     `json:"name"`
	Capacity   int32      `json:"capacity"`
	ModelHash  string     `json:"modelHash,omitempty"`
	ModelRef   string     `json:"modelRef"`
	Simulation Simulation `json:"simulation"`
	CreatedAt  time.Time  `json:"createdAt"`
	Deleting   bool       `json:"deleting,omitempty"`
	// WrongTokens counts down the next instances that boot with a wrong
	// bootstrap token (GroupFaults).
	WrongTokens int        `json:"wrongTokens,omitempty"`
	Operation   *Operation `json:"operation,omitempty"`
	// Models holds every model an instance still references (a VM keeps the
	// custom data it was created with), by content key.
	Models map[string]*Model `json:"models"`
	// Instances are ordered by ID (creation order).
	Instances []*instanceState `json:"instances"`

	// next is the time of the group's next due transition; zero when at rest.
	next time.Time
}

type instanceState struct {
	ID          string        `json:"id"`
	Seq         uint64        `json:"seq"`
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
}

func newState() *cloudState {
	return &cloudState{Version: stateVersion, Groups: map[string]*groupState{}}
}

// find returns the instance with id, or nil. Instances are sorted by ID.
func (g *groupState) find(id string) *instanceState {
	i := sort.Search(len(g.Instances), func(i int) bool { return g.Instances[i].ID >= id })
	if i < len(g.Instances) && g.Instances[i].ID == id {
		return g.Instances[i]
	}
	return nil
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
	st := newState()
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("parsing cloud state %s: %w", s.path(), err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("cloud state %s has version %d, want %d", s.path(), st.Version, stateVersion)
	}
	if st.Groups == nil {
		st.Groups = map[string]*groupState{}
	}
	for _, g := range st.Groups {
		if g.Models == nil {
			g.Models = map[string]*Model{}
		}
		sort.Slice(g.Instances, func(i, j int) bool { return g.Instances[i].ID < g.Instances[j].ID })
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
