// Package cloudinit reads bootstrap data the way a simulated VM's cloud-init
// and kubeadm would: it renders cloud-init's jinja instance-data placeholders,
// parses a #cloud-config document (write_files with their encodings, runcmd),
// and parses the kubeadm JoinConfiguration (kubeadm.k8s.io/v1beta3 and
// v1beta4) that the bootstrap provider writes as a file.
//
// It is pure: no I/O, no clock. Callers must not log the data it handles; it
// carries bootstrap tokens.
package cloudinit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Header is the first line of a cloud-config document.
const Header = "#cloud-config"

// JinjaHeader is the optional line before Header that asks cloud-init to
// render the document as a jinja template.
const JinjaHeader = "## template: jinja"

// DefaultJoinConfigPath is where Cluster API's kubeadm bootstrap provider
// writes the JoinConfiguration.
const DefaultJoinConfigPath = "/run/kubeadm/kubeadm-join-config.yaml"

// maxDecompressed bounds gzip output so hostile data cannot exhaust memory.
const maxDecompressed = 16 << 20

// ErrNotCloudConfig is returned for bootstrap data that is not a
// #cloud-config document (a shell script, ignition, ...).
var ErrNotCloudConfig = errors.New("bootstrap data is not a #cloud-config document")

// Metadata is the instance data cloud-init exposes to templates.
type Metadata struct {
	// LocalHostname is the instance's host name (local_hostname).
	LocalHostname string
	// InstanceID is the cloud's instance ID (instance_id).
	InstanceID string
	// LocalIPv4 is the instance's private address (local_ipv4).
	LocalIPv4 string
	// AvailabilityZone is the instance's zone (availability_zone).
	AvailabilityZone string
	// Region is the instance's region (region).
	Region string
	// Extra are further keys a cloud's metadata service exposes, looked up
	// by the name in the template or with dashes and underscores swapped
	// (availability-zone ≡ availability_zone). The fields above win.
	Extra map[string]string
}

// MetadataOf returns the Metadata of a cloud's ds.meta_data map: the known
// keys (with underscores, as cloud-init's instance data names them) fill the
// fields, and every key is also in Extra.
func MetadataOf(md map[string]string) Metadata {
	return Metadata{
		LocalHostname:    md["local_hostname"],
		InstanceID:       md["instance_id"],
		LocalIPv4:        md["local_ipv4"],
		AvailabilityZone: md["availability_zone"],
		Region:           md["region"],
		Extra:            md,
	}
}

func (m Metadata) lookup(key string) (string, bool) {
	if v, ok := m.lookupField(key); ok {
		return v, true
	}
	for _, k := range []string{key, strings.ReplaceAll(key, "-", "_"), strings.ReplaceAll(key, "_", "-")} {
		if v := m.Extra[k]; v != "" {
			return v, true
		}
	}
	return "", false
}

func (m Metadata) lookupField(key string) (string, bool) {
	var v string
	switch key {
	case "local_hostname", "local-hostname":
		v = m.LocalHostname
	case "instance_id", "instance-id":
		v = m.InstanceID
	case "local_ipv4", "local-ipv4":
		v = m.LocalIPv4
	case "availability_zone", "availability-zone":
		v = m.AvailabilityZone
	case "region":
		v = m.Region
	default:
		return "", false
	}
	return v, v != ""
}

// jinjaVar matches the instance-data expressions Cluster API templates use:
// {{ ds.meta_data["local_hostname"] }}, {{ ds.meta_data.local_hostname }} and
// {{ v1.local_hostname }}.
var jinjaVar = regexp.MustCompile(`\{\{\s*(?:ds\.meta_data\[\s*["']([A-Za-z0-9_-]+)["']\s*\]|ds\.meta_data\.([A-Za-z0-9_]+)|v1\.([A-Za-z0-9_]+))\s*\}\}`)

// Render substitutes the instance-data placeholders in data with meta. Real
// cloud-init renders only documents whose first line is JinjaHeader; Render
// substitutes the known placeholders regardless, so a missing header cannot
// turn a template expression into a node name. Unknown placeholders are left
// as they are.
func Render(data []byte, meta Metadata) []byte {
	return jinjaVar.ReplaceAllFunc(data, func(m []byte) []byte {
		sub := jinjaVar.FindSubmatch(m)
		key := string(sub[1]) + string(sub[2]) + string(sub[3])
		if v, ok := meta.lookup(key); ok {
			return []byte(v)
		}
		return m
	})
}

// CloudConfig is the part of a #cloud-config document a simulated VM acts on.
type CloudConfig struct {
	// WriteFiles are the files cloud-init writes before running commands.
	WriteFiles []WriteFile `json:"write_files,omitempty"`
	// RunCmd are the commands cloud-init runs, each either a shell string or
	// an argv list (flattened to a space-separated string here).
	RunCmd []string `json:"-"`
}

// WriteFile is one write_files entry.
type WriteFile struct {
	// Path is the absolute file path.
	Path string `json:"path"`
	// Content is the file content, encoded as Encoding says.
	Content string `json:"content,omitempty"`
	// Encoding is one of "", "text/plain", "b64", "base64", "gz", "gzip",
	// "gz+b64", "gz+base64", "gzip+b64", "gzip+base64".
	Encoding string `json:"encoding,omitempty"`
	// Owner is user:group.
	Owner string `json:"owner,omitempty"`
	// Permissions is an octal mode string.
	Permissions string `json:"permissions,omitempty"`
	// Append appends to an existing file instead of replacing it.
	Append bool `json:"append,omitempty"`
}

// Decode returns the file's content with its encoding undone.
func (f WriteFile) Decode() ([]byte, error) {
	content := []byte(f.Content)
	enc := strings.ToLower(strings.TrimSpace(f.Encoding))
	var b64, gz bool
	switch enc {
	case "", "text/plain", "none":
	case "b64", "base64":
		b64 = true
	case "gz", "gzip", "application/x-gzip":
		gz = true
	case "gz+b64", "gz+base64", "gzip+b64", "gzip+base64":
		b64, gz = true, true
	default:
		return nil, fmt.Errorf("file %s: unknown encoding %q", f.Path, f.Encoding)
	}
	if b64 {
		clean := strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, f.Content)
		dec, err := base64.StdEncoding.DecodeString(clean)
		if err != nil {
			return nil, fmt.Errorf("file %s: decoding base64: %w", f.Path, err)
		}
		content = dec
	}
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(content))
		if err != nil {
			return nil, fmt.Errorf("file %s: reading gzip: %w", f.Path, err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, maxDecompressed+1))
		if err != nil {
			return nil, fmt.Errorf("file %s: reading gzip: %w", f.Path, err)
		}
		if len(out) > maxDecompressed {
			return nil, fmt.Errorf("file %s: decompressed content exceeds %d bytes", f.Path, maxDecompressed)
		}
		content = out
	}
	return content, nil
}

// File returns the last write_files entry for path (later entries win, as
// cloud-init writes them in order) and whether there is one.
func (c *CloudConfig) File(path string) (WriteFile, bool) {
	for i := len(c.WriteFiles) - 1; i >= 0; i-- {
		if c.WriteFiles[i].Path == path {
			return c.WriteFiles[i], true
		}
	}
	return WriteFile{}, false
}

// Parse parses a #cloud-config document, optionally preceded by JinjaHeader.
// It does not render placeholders; call Render first.
func Parse(data []byte) (*CloudConfig, error) {
	if !IsCloudConfig(data) {
		return nil, ErrNotCloudConfig
	}
	var raw struct {
		WriteFiles []WriteFile `json:"write_files"`
		RunCmd     []any       `json:"runcmd"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parsing cloud-config: %w", err)
	}
	cc := &CloudConfig{WriteFiles: raw.WriteFiles}
	for i, c := range raw.RunCmd {
		switch v := c.(type) {
		case string:
			cc.RunCmd = append(cc.RunCmd, v)
		case []any:
			parts := make([]string, 0, len(v))
			for _, p := range v {
				parts = append(parts, fmt.Sprint(p))
			}
			cc.RunCmd = append(cc.RunCmd, strings.Join(parts, " "))
		case nil:
		default:
			return nil, fmt.Errorf("parsing cloud-config: runcmd[%d]: unsupported type %T", i, c)
		}
	}
	return cc, nil
}

// IsCloudConfig reports whether data starts with Header, optionally after
// JinjaHeader (and blank lines).
func IsCloudConfig(data []byte) bool {
	rest := data
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		l := strings.TrimSpace(string(line))
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "## template:"):
			continue
		default:
			return strings.HasPrefix(l, Header)
		}
	}
	return false
}

// joinConfigPathFromRunCmd returns the --config argument of a `kubeadm join`
// command in runcmd, if any.
func joinConfigPathFromRunCmd(cmds []string) string {
	for _, c := range cmds {
		if !strings.Contains(c, "kubeadm") || !strings.Contains(c, "join") {
			continue
		}
		f := strings.Fields(c)
		for i, a := range f {
			if a == "--config" && i+1 < len(f) {
				return strings.Trim(f[i+1], `'"`)
			}
			if v, ok := strings.CutPrefix(a, "--config="); ok {
				return strings.Trim(v, `'"`)
			}
		}
	}
	return ""
}

// JoinConfigFile returns the content of the kubeadm JoinConfiguration file the
// cloud-config writes: the file the `kubeadm join --config` command in runcmd
// names, else DefaultJoinConfigPath.
func (c *CloudConfig) JoinConfigFile() ([]byte, error) {
	path := joinConfigPathFromRunCmd(c.RunCmd)
	if path == "" {
		path = DefaultJoinConfigPath
	}
	f, ok := c.File(path)
	if !ok {
		return nil, fmt.Errorf("cloud-config writes no kubeadm join configuration at %s", path)
	}
	return f.Decode()
}
