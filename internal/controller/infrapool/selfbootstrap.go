package infrapool

// SelfBootstrapping is implemented by Adapters whose cloud bootstraps its
// own instances (an EKS managed node group: EKS writes its nodes' user data
// and joins them itself), so that the MachinePool names no bootstrap data
// (spec.template.spec.bootstrap.dataSecretName: ""). The engine then does
// not wait for bootstrap data before it creates or scales the group, and
// the model carries none.
type SelfBootstrapping interface {
	// BootstrapsItself reports whether the cloud bootstraps the pool's
	// instances itself.
	BootstrapsItself() bool
}

// bootstrapsItself reports whether a's cloud bootstraps its own instances.
func bootstrapsItself(a Adapter) bool {
	sb, ok := a.(SelfBootstrapping)
	return ok && sb.BootstrapsItself()
}
