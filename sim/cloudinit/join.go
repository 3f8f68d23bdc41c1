package cloudinit

import "fmt"

// ReadJoin renders data for the instance described by meta, parses it as a
// cloud-config and returns the kubeadm JoinConfiguration it writes — the
// steps a VM takes between first boot and `kubeadm join`. A node name left
// empty in the configuration defaults to meta.LocalHostname, as kubeadm
// defaults it to the host name.
func ReadJoin(data []byte, meta Metadata) (*JoinConfig, error) {
	cc, err := Parse(Render(data, meta))
	if err != nil {
		return nil, err
	}
	file, err := cc.JoinConfigFile()
	if err != nil {
		return nil, err
	}
	jc, err := ParseJoinConfiguration(file)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeadm join configuration: %w", err)
	}
	if jc.NodeName == "" {
		jc.NodeName = meta.LocalHostname
	}
	return jc, nil
}
