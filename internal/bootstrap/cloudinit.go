package bootstrap

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

// Header is the start of every cloud-config document RenderCloudInit returns:
// the jinja line makes cloud-init render instance-data placeholders such as
// {{ ds.meta_data["local_hostname"] }} before it parses the YAML.
const Header = "## template: jinja\n#cloud-config\n"

// Paths and commands of the rendered document, as Cluster API's kubeadm
// bootstrap provider writes them.
const (
	// JoinConfigPath is where the kubeadm JoinConfiguration is written.
	JoinConfigPath = "/run/kubeadm/kubeadm-join-config.yaml"
	// SentinelPath is written once kubeadm join succeeded.
	SentinelPath = "/run/cluster-api/bootstrap-success.complete"

	placeholderPath    = "/run/cluster-api/placeholder"
	placeholderContent = "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"
)

// ErrUnsupportedFormat is returned for a KubeadmConfig whose format RenderCloudInit
// cannot produce (ignition). Retrying cannot fix it.
var ErrUnsupportedFormat = errors.New("unsupported bootstrap data format")

// SecretKey names one key of a Secret in the KubeadmConfig's namespace, as a
// file's contentFrom or a user's passwdFrom references it.
type SecretKey struct {
	// Name of the Secret.
	Name string
	// Key in the Secret's data.
	Key string
}

// Input is everything RenderCloudInit needs. It holds secrets: never log it.
type Input struct {
	// Spec is the KubeadmConfig's spec as written. Its files' contentFrom and
	// users' passwdFrom are resolved from SecretData; its JoinConfiguration is
	// ignored in favour of JoinConfiguration when that is set.
	Spec *bootstrapv1.KubeadmConfigSpec
	// SecretData holds the value of every Secret key Spec references
	// (SecretKeys lists them).
	SecretData map[SecretKey][]byte
	// JoinConfiguration is Spec.JoinConfiguration with the discovery filled
	// in: API server endpoint, CA pins and bootstrap token. Nil means
	// Spec.JoinConfiguration as written.
	JoinConfiguration *bootstrapv1.JoinConfiguration
	// KubernetesVersion is the node's Kubernetes version (for example
	// "v1.31.2"); it selects the kubeadm API version. Empty selects v1beta3.
	KubernetesVersion string
	// ControlPlaneVersion is the Kubernetes version of the Cluster's control
	// plane (for example "v1.31.2"), the .controlPlane.version of files
	// whose contentFormat is Template. Empty leaves .controlPlane out of the
	// template data, as Cluster API does when the version is not known.
	ControlPlaneVersion string
}

// SecretKeys returns the Secret keys spec references through files'
// contentFrom and users' passwdFrom, without duplicates, in spec order.
func SecretKeys(spec *bootstrapv1.KubeadmConfigSpec) []SecretKey {
	if spec == nil {
		return nil
	}
	var keys []SecretKey
	seen := map[SecretKey]bool{}
	add := func(k SecretKey) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, f := range spec.Files {
		if f.ContentFrom.IsDefined() {
			add(SecretKey{Name: f.ContentFrom.Secret.Name, Key: f.ContentFrom.Secret.Key})
		}
	}
	for _, u := range spec.Users {
		if u.PasswdFrom.IsDefined() {
			add(SecretKey{Name: u.PasswdFrom.Secret.Name, Key: u.PasswdFrom.Secret.Key})
		}
	}
	return keys
}

// cloudConfig is the subset of cloud-init's #cloud-config that a kubeadm
// worker needs, in the order Cluster API writes it.
type cloudConfig struct {
	WriteFiles []writeFile             `yaml:"write_files"`
	BootCmd    []yamlText              `yaml:"bootcmd,omitempty"`
	RunCmd     []yamlText              `yaml:"runcmd"`
	NTP        *ntpConfig              `yaml:"ntp,omitempty"`
	Users      []cloudUser             `yaml:"users,omitempty"`
	DiskSetup  map[yamlText]diskLayout `yaml:"disk_setup,omitempty"`
	FSSetup    []fsSetup               `yaml:"fs_setup,omitempty"`
	Mounts     [][]yamlText            `yaml:"mounts,omitempty"`
}

type writeFile struct {
	Path        yamlText `yaml:"path"`
	Owner       yamlText `yaml:"owner,omitempty"`
	Permissions yamlText `yaml:"permissions,omitempty"`
	Encoding    yamlText `yaml:"encoding,omitempty"`
	Append      bool     `yaml:"append,omitempty"`
	Content     yamlText `yaml:"content"`
}

// yamlText is a string that is written in the encoder's usual style (a
// literal block when it has several lines) unless a YAML 1.1 parser such as
// cloud-init's PyYAML (or go-yaml v2) would reject that, and double-quoted
// then.
type yamlText string

// MarshalYAML implements yaml.Marshaler.
func (t yamlText) MarshalYAML() (any, error) {
	// Before a block scalar's first non-blank character its indentation is
	// not known yet, and libyaml-derived parsers reject a tab there.
	for _, r := range string(t) {
		if r == '\t' {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: string(t)}, nil
		}
		if r != ' ' && r != '\n' {
			break
		}
	}
	// A plain string keeps the encoder's own style choice, which quotes
	// YAML 1.1 booleans and numbers.
	return string(t), nil
}

type ntpConfig struct {
	Enabled *bool      `yaml:"enabled,omitempty"`
	Servers []yamlText `yaml:"servers,omitempty"`
}

type cloudUser struct {
	Name              yamlText   `yaml:"name"`
	Passwd            yamlText   `yaml:"passwd,omitempty"`
	Gecos             yamlText   `yaml:"gecos,omitempty"`
	Groups            yamlText   `yaml:"groups,omitempty"`
	HomeDir           yamlText   `yaml:"homedir,omitempty"`
	Inactive          bool       `yaml:"inactive,omitempty"`
	LockPasswd        *bool      `yaml:"lock_passwd,omitempty"`
	Shell             yamlText   `yaml:"shell,omitempty"`
	PrimaryGroup      yamlText   `yaml:"primary_group,omitempty"`
	Sudo              yamlText   `yaml:"sudo,omitempty"`
	SSHAuthorizedKeys []yamlText `yaml:"ssh_authorized_keys,omitempty"`
}

type diskLayout struct {
	TableType yamlText `yaml:"table_type,omitempty"`
	// Layout is a bool (one partition over the whole disk, or none) or a
	// list of partitions: a percentage, or [percentage, partition type].
	Layout    any   `yaml:"layout"`
	Overwrite *bool `yaml:"overwrite,omitempty"`
}

type fsSetup struct {
	Label      yamlText   `yaml:"label,omitempty"`
	Filesystem yamlText   `yaml:"filesystem"`
	Device     yamlText   `yaml:"device"`
	Partition  yamlText   `yaml:"partition,omitempty"`
	Overwrite  *bool      `yaml:"overwrite,omitempty"`
	ReplaceFS  yamlText   `yaml:"replace_fs,omitempty"`
	ExtraOpts  []yamlText `yaml:"extra_opts,omitempty"`
}

// RenderCloudInit renders the bootstrap data of a pool instance as a
// cloud-config document (format cloud-config): write_files with the spec's
// files, the kubeadm JoinConfiguration at JoinConfigPath and Cluster API's
// placeholder file; bootcmd; runcmd with the pre-kubeadm commands, kubeadm join
// and the post-kubeadm commands; ntp; users; disk_setup, fs_setup and mounts.
// The output is deterministic: the same input renders the same bytes.
//
// Files whose contentFormat is Template are rendered as Go text/template
// with Cluster API's template data (see Input.ControlPlaneVersion) after
// their content is resolved.
//
// It returns ErrUnsupportedFormat for format ignition, and an error when a
// referenced Secret key is missing from SecretData, a file's template does
// not render or the JoinConfiguration asks for a control plane join (pools
// are workers only).
func RenderCloudInit(in Input) ([]byte, error) {
	spec := in.Spec
	if spec == nil {
		return nil, errors.New("rendering cloud-init: no KubeadmConfig spec")
	}
	if spec.Format != "" && spec.Format != bootstrapv1.CloudConfig {
		return nil, fmt.Errorf("rendering format %q: %w (only %s is supported)", spec.Format, ErrUnsupportedFormat, bootstrapv1.CloudConfig)
	}
	jc := in.JoinConfiguration
	if jc == nil {
		jc = &spec.JoinConfiguration
	}
	if jc.ControlPlane != nil {
		return nil, errors.New("rendering cloud-init: joinConfiguration.controlPlane is set, but pool instances join as workers only")
	}
	joinData, err := MarshalJoinConfiguration(jc, in.KubernetesVersion)
	if err != nil {
		return nil, err
	}

	cc := cloudConfig{BootCmd: texts(spec.BootCommands)}
	for i, f := range spec.Files {
		wf, err := renderFile(f, in.SecretData, in.ControlPlaneVersion)
		if err != nil {
			return nil, fmt.Errorf("rendering spec.files[%d]: %w", i, err)
		}
		cc.WriteFiles = append(cc.WriteFiles, wf)
	}
	cc.WriteFiles = append(cc.WriteFiles,
		writeFile{Path: JoinConfigPath, Owner: "root:root", Permissions: "0640", Content: yamlText("---\n" + string(joinData))},
		writeFile{Path: placeholderPath, Owner: "root:root", Permissions: "0640", Content: yamlText(placeholderContent)},
	)

	cc.RunCmd = append(cc.RunCmd, texts(spec.PreKubeadmCommands)...)
	cc.RunCmd = append(cc.RunCmd, yamlText(joinCommand(spec.Verbosity)))
	cc.RunCmd = append(cc.RunCmd, texts(spec.PostKubeadmCommands)...)

	if n := spec.NTP; n.IsDefined() {
		cc.NTP = &ntpConfig{Enabled: n.Enabled, Servers: texts(n.Servers)}
	}
	for i, u := range spec.Users {
		cu, err := renderUser(u, in.SecretData)
		if err != nil {
			return nil, fmt.Errorf("rendering spec.users[%d]: %w", i, err)
		}
		cc.Users = append(cc.Users, cu)
	}
	if ds := spec.DiskSetup; ds.IsDefined() {
		for _, p := range ds.Partitions {
			if cc.DiskSetup == nil {
				cc.DiskSetup = map[yamlText]diskLayout{}
			}
			cc.DiskSetup[text(p.Device)] = diskLayout{TableType: text(p.TableType), Layout: partitionLayout(p), Overwrite: p.Overwrite}
		}
		for _, f := range ds.Filesystems {
			cc.FSSetup = append(cc.FSSetup, fsSetup{
				Label:      text(f.Label),
				Filesystem: text(f.Filesystem),
				Device:     text(f.Device),
				Partition:  text(f.Partition),
				Overwrite:  f.Overwrite,
				ReplaceFS:  text(f.ReplaceFS),
				ExtraOpts:  texts(f.ExtraOpts),
			})
		}
	}
	for _, m := range spec.Mounts {
		cc.Mounts = append(cc.Mounts, texts(m))
	}

	var buf bytes.Buffer
	buf.WriteString(Header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&cc); err != nil {
		return nil, fmt.Errorf("encoding cloud-config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding cloud-config: %w", err)
	}
	return buf.Bytes(), nil
}

// joinCommand is the runcmd entry that joins the node and, on success, writes
// Cluster API's sentinel file.
func joinCommand(verbosity *int32) string {
	join := "kubeadm join --config " + JoinConfigPath
	if verbosity != nil {
		join += fmt.Sprintf(" --v %d", *verbosity)
	}
	return join + " && echo success > " + SentinelPath
}

// partitionLayout is a partition's cloud-init layout: its diskLayout when it
// has one (each entry a percentage, or [percentage, type] with Cluster API's
// type names mapped to cloud-init's partition type codes), else its layout
// flag (unset is false).
func partitionLayout(p bootstrapv1.Partition) any {
	if len(p.DiskLayout) == 0 {
		return p.Layout != nil && *p.Layout
	}
	layout := make([]any, 0, len(p.DiskLayout))
	for _, d := range p.DiskLayout {
		if d.PartitionType == "" {
			layout = append(layout, d.Percentage)
			continue
		}
		layout = append(layout, []any{d.Percentage, text(partitionTypeCode(d.PartitionType))})
	}
	return layout
}

// partitionTypeCode maps a Cluster API partition type name to cloud-init's
// code, as Cluster API's own cloud-init renderer does; any other value is
// passed through as a raw cloud-init code.
func partitionTypeCode(t string) string {
	switch t {
	case bootstrapv1.PartitionTypeLinux:
		return "83"
	case bootstrapv1.PartitionTypeLinuxSwap:
		return "82"
	case bootstrapv1.PartitionTypeLinuxRAID:
		return "fd"
	case bootstrapv1.PartitionTypeLVM:
		return "8e"
	case bootstrapv1.PartitionTypeFat32:
		return "0c"
	case bootstrapv1.PartitionTypeNTFS:
		return "07"
	case bootstrapv1.PartitionTypeLinuxExtended:
		return "85"
	default:
		return t
	}
}

// renderFile resolves a file's content, renders it when it is a template, and
// keeps it representable: content that is not UTF-8 text is base64-encoded
// (and its encoding adjusted) since a YAML string cannot carry arbitrary
// bytes.
func renderFile(f bootstrapv1.File, secrets map[SecretKey][]byte, controlPlaneVersion string) (writeFile, error) {
	content := []byte(f.Content)
	if f.ContentFrom.IsDefined() {
		k := SecretKey{Name: f.ContentFrom.Secret.Name, Key: f.ContentFrom.Secret.Key}
		v, ok := secrets[k]
		if !ok {
			return writeFile{}, fmt.Errorf("file %s: content of Secret %s key %s was not provided", text(f.Path), text(k.Name), text(k.Key))
		}
		content = v
	}
	switch f.ContentFormat {
	case "", bootstrapv1.FileContentFormatRaw:
	case bootstrapv1.FileContentFormatTemplate:
		rendered, err := renderTemplate(string(content), controlPlaneVersion)
		if err != nil {
			return writeFile{}, fmt.Errorf("file %s: %w", text(f.Path), err)
		}
		content = rendered
	default:
		return writeFile{}, fmt.Errorf("file %s: unsupported contentFormat %s", text(f.Path), text(string(f.ContentFormat)))
	}
	enc := string(f.Encoding)
	if !utf8.Valid(content) {
		switch f.Encoding {
		case "":
			enc = "base64"
		case bootstrapv1.Gzip:
			enc = string(bootstrapv1.GzipBase64)
		default:
			return writeFile{}, fmt.Errorf("file %s: encoding is %s but the content is not text", text(f.Path), f.Encoding)
		}
		content = []byte(base64.StdEncoding.EncodeToString(content))
	}
	return writeFile{
		Path:        text(f.Path),
		Owner:       text(f.Owner),
		Permissions: text(f.Permissions),
		Encoding:    text(enc),
		Append:      f.Append != nil && *f.Append,
		Content:     yamlText(content),
	}, nil
}

func renderUser(u bootstrapv1.User, secrets map[SecretKey][]byte) (cloudUser, error) {
	passwd := u.Passwd
	if u.PasswdFrom.IsDefined() {
		k := SecretKey{Name: u.PasswdFrom.Secret.Name, Key: u.PasswdFrom.Secret.Key}
		v, ok := secrets[k]
		if !ok {
			return cloudUser{}, fmt.Errorf("user %s: password of Secret %s key %s was not provided", text(u.Name), text(k.Name), text(k.Key))
		}
		passwd = string(v)
	}
	return cloudUser{
		Name:              text(u.Name),
		Passwd:            text(passwd),
		Gecos:             text(u.Gecos),
		Groups:            text(u.Groups),
		HomeDir:           text(u.HomeDir),
		Inactive:          u.Inactive != nil && *u.Inactive,
		LockPasswd:        u.LockPassword,
		Shell:             text(u.Shell),
		PrimaryGroup:      text(u.PrimaryGroup),
		Sudo:              text(u.Sudo),
		SSHAuthorizedKeys: texts(u.SSHAuthorizedKeys),
	}, nil
}

// text makes s valid UTF-8 the way JSON encoding (and so the API server) does,
// each invalid byte becoming U+FFFD, so that it encodes as a YAML string and
// never as !!binary.
func text(s string) yamlText {
	if utf8.ValidString(s) {
		return yamlText(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:]) // an invalid byte decodes as U+FFFD
		b.WriteRune(r)
		i += size
	}
	return yamlText(b.String())
}

func texts(in []string) []yamlText {
	if in == nil {
		return nil
	}
	out := make([]yamlText, len(in))
	for i, s := range in {
		out[i] = text(s)
	}
	return out
}
