package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KubeadmConfigTemplateSpec is the desired state of a KubeadmConfigTemplate.
type KubeadmConfigTemplateSpec struct {
	// Template is stamped into each KubeadmConfig created from this template.
	// +required
	Template KubeadmConfigTemplateResource `json:"template"`
}

// KubeadmConfigTemplateResource is the KubeadmConfig a template creates.
type KubeadmConfigTemplateResource struct {
	// ObjectMeta holds the labels and annotations of the created config.
	// +optional
	ObjectMeta TemplateObjectMeta `json:"metadata,omitempty"`

	// Spec of the created config.
	// +optional
	Spec KubeadmConfigSpec `json:"spec,omitempty"`
}

// TemplateObjectMeta is the metadata a template stamps onto the objects it creates.
type TemplateObjectMeta struct {
	// Labels to set.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations to set.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmconfigtemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// KubeadmConfigTemplate is a template for KubeadmConfigs.
type KubeadmConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec KubeadmConfigTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// KubeadmConfigTemplateList is a list of KubeadmConfigTemplates.
type KubeadmConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the templates.
	Items []KubeadmConfigTemplate `json:"items"`
}
