package apitest

import (
	"fmt"
	"strings"
	"testing"
)

// Valid base objects; each validation row patches one of them.
var bases = map[string]string{
	"MachinePool": `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
spec:
  clusterName: demo
  replicas: 2
  template:
    spec:
      clusterName: demo
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
          kind: KubeadmConfig
          name: demo-mp-0
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: AzureMachinePool
        name: demo-mp-0
      version: v1.31.2
`,
	"Machine": `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
spec:
  clusterName: demo
  bootstrap:
    dataSecretName: demo-bootstrap
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: AzureMachinePoolMachine
    name: demo-mp-0-0
  version: v1.31.2
`,
	"MachineHealthCheck": `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineHealthCheck
spec:
  clusterName: demo
  selector:
    matchLabels:
      cluster.x-k8s.io/pool-name: demo-mp-0
  maxUnhealthy: 40%
  nodeStartupTimeout: 10m
  unhealthyConditions:
  - type: Ready
    status: Unknown
    timeout: 300s
`,
	"Cluster": `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/16"]
`,
	"AzureMachinePool": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureMachinePool
spec:
  location: westus2
  template:
    vmSize: Standard_D2s_v3
    osDisk:
      osType: Linux
      diskSizeGB: 30
    sshPublicKey: ""
`,
	"AWSMachinePool": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AWSMachinePool
spec:
  minSize: 1
  maxSize: 10
  awsLaunchTemplate:
    instanceType: m5.large
`,
	"AWSManagedMachinePool": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AWSManagedMachinePool
spec:
  instanceType: m5.large
  scaling:
    minSize: 1
    maxSize: 3
`,
	"AzureManagedMachinePool": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureManagedMachinePool
spec:
  name: pool0
  mode: User
  sku: Standard_D2s_v5
  availabilityZones: ["1", "2"]
  osDiskSizeGB: 64
`,
	"LocalMachinePool": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LocalMachinePool
spec:
  template:
    instanceType: small
    image: ubuntu-24.04
    zones: ["zone-a", "zone-b"]
`,
	"LocalMachinePoolMachine": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LocalMachinePoolMachine
spec:
  providerID: local:///demo/0
`,
	"AzureMachinePoolMachine": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureMachinePoolMachine
spec:
  providerID: azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/demo/virtualMachines/0
`,
	"AzureCluster": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureCluster
spec:
  subscriptionID: 11111111-1111-1111-1111-111111111111
  resourceGroup: mpool-sim
  location: eastus
  identityRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: AzureClusterIdentity
    name: demo-identity
  networkSpec:
    vnet:
      name: demo-vnet
      cidrBlocks: ["10.0.0.0/8"]
    subnets:
    - name: control-plane-subnet
      role: control-plane
      cidrBlocks: ["10.0.0.0/16"]
    - name: node-subnet
      role: node
      cidrBlocks: ["10.1.0.0/16"]
`,
	"AzureClusterIdentity": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureClusterIdentity
spec:
  type: ServicePrincipal
  clientID: 33333333-3333-3333-3333-333333333333
  tenantID: 22222222-2222-2222-2222-222222222222
  clientSecret:
    name: demo-identity-secret
  allowedNamespaces: {}
`,
	"GCPMachinePool": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: GCPMachinePool
spec:
  instanceType: n2-standard-2
  zones: [us-central1-a, us-central1-b]
`,
	"GCPMachinePoolMachine": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: GCPMachinePoolMachine
spec:
  providerID: gce://mpool-sim/us-central1-a/demo-abcd
  instanceID: demo-abcd
`,
	"GCPCluster": `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: GCPCluster
spec:
  project: mpool-sim
  region: us-central1
  network: {name: default}
`,
	"KubeadmConfig": `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfig
spec:
  files:
  - path: /etc/demo
    content: hello
  joinConfiguration:
    nodeRegistration:
      name: '{{ ds.meta_data.local_hostname }}'
`,
	"KubeadmConfigTemplate": `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
spec:
  template:
    spec:
      files:
      - path: /etc/demo
        content: hello
      joinConfiguration:
        nodeRegistration:
          name: '{{ ds.meta_data.local_hostname }}'
`,
}

// v1beta2Bases are the valid base objects of Cluster API's own kinds in v1beta2, the
// version they are stored in; the rows of these kinds run against both versions, v1beta1
// (bases) and v1beta2, since both are served and held to the same rules.
var v1beta2Bases = map[string]string{
	"MachinePool": `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
spec:
  clusterName: demo
  replicas: 2
  template:
    spec:
      clusterName: demo
      bootstrap:
        configRef:
          apiGroup: bootstrap.cluster.x-k8s.io
          kind: KubeadmConfig
          name: demo-mp-0
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: AzureMachinePool
        name: demo-mp-0
      version: v1.31.2
`,
	"Machine": `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
spec:
  clusterName: demo
  bootstrap:
    dataSecretName: demo-bootstrap
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: AzureMachinePoolMachine
    name: demo-mp-0-0
  version: v1.31.2
`,
	"MachineHealthCheck": `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
spec:
  clusterName: demo
  selector:
    matchLabels:
      cluster.x-k8s.io/pool-name: demo-mp-0
  checks:
    nodeStartupTimeoutSeconds: 600
    unhealthyNodeConditions:
    - type: Ready
      status: Unknown
      timeoutSeconds: 300
  remediation:
    triggerIf:
      unhealthyLessThanOrEqualTo: 40%
`,
	"Cluster": `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/16"]
`,
	"KubeadmConfig": `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfig
spec:
  files:
  - path: /etc/demo
    content: hello
  joinConfiguration:
    nodeRegistration:
      name: '{{ ds.meta_data.local_hostname }}'
`,
	"KubeadmConfigTemplate": `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
spec:
  template:
    spec:
      files:
      - path: /etc/demo
        content: hello
      joinConfiguration:
        nodeRegistration:
          name: '{{ ds.meta_data.local_hostname }}'
`,
}

// strategy builds a patch setting an Azure or local pool's rolling update parameters.
func strategy(rollingUpdate string) string {
	return "spec:\n  strategy:\n    rollingUpdate: " + rollingUpdate + "\n"
}

// TestAdmissionValidation creates (or updates) one bad object per row and expects the API
// server to refuse it with a message naming the field; rows with an empty want must be
// accepted. Rows of a kind with a v1beta2 base run in v1beta1 and in v1beta2.
func TestAdmissionValidation(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		patch  string // merge patch (YAML) applied to the base before create
		update string // when set: create the patched object, then apply this and update
		want   string // expected substring of the rejection; "" means accepted
		fix    string // when set: a further expected substring, the part of the message saying what to change
		// In v1beta2, when the field is elsewhere: the patch and the expected substring.
		v1beta2Patch, v1beta2Want string
	}{
		// MachinePool.
		{name: "machinepool valid", kind: "MachinePool"},
		{name: "machinepool zero replicas is valid", kind: "MachinePool", patch: "spec: {replicas: 0}"},
		{name: "machinepool without replicas is valid (controller defaults it)", kind: "MachinePool", patch: "spec: {replicas: null}"},
		{name: "machinepool pre-release version is valid", kind: "MachinePool", patch: "spec: {template: {spec: {version: v1.31.0-rc.1}}}"},
		{name: "machinepool dataSecretName instead of configRef is valid", kind: "MachinePool", patch: "spec: {template: {spec: {bootstrap: {configRef: null, dataSecretName: demo}}}}"},
		{name: "negative replicas", kind: "MachinePool", patch: "spec: {replicas: -1}", want: "spec.replicas"},
		{name: "empty clusterName", kind: "MachinePool", patch: `spec: {clusterName: ""}`, want: "spec.clusterName"},
		{name: "missing clusterName", kind: "MachinePool", patch: "spec: {clusterName: null}", want: "spec.clusterName"},
		{name: "changing clusterName", kind: "MachinePool", update: "spec: {clusterName: other, template: {spec: {clusterName: other}}}", want: "clusterName is immutable"},
		{name: "template clusterName differs from clusterName", kind: "MachinePool", patch: "spec: {template: {spec: {clusterName: other}}}", want: "spec.template.spec.clusterName"},
		{name: "negative minReadySeconds", kind: "MachinePool", patch: "spec: {minReadySeconds: -5}", want: "spec.minReadySeconds",
			v1beta2Patch: "spec: {template: {spec: {minReadySeconds: -5}}}", v1beta2Want: "spec.template.spec.minReadySeconds"},
		{name: "version without v", kind: "MachinePool", patch: "spec: {template: {spec: {version: 1.22.0}}}", want: "spec.template.spec.version"},
		{name: "version without patch number", kind: "MachinePool", patch: "spec: {template: {spec: {version: v1.22}}}", want: "spec.template.spec.version"},
		{name: "infrastructureRef without kind", kind: "MachinePool", patch: "spec: {template: {spec: {infrastructureRef: {kind: null}}}}", want: "spec.template.spec.infrastructureRef.kind"},
		{name: "infrastructureRef without name", kind: "MachinePool", patch: "spec: {template: {spec: {infrastructureRef: {name: null}}}}", want: "spec.template.spec.infrastructureRef.name"},
		{name: "missing infrastructureRef", kind: "MachinePool", patch: "spec: {template: {spec: {infrastructureRef: null}}}", want: "spec.template.spec.infrastructureRef"},
		{name: "bootstrap with neither configRef nor dataSecretName", kind: "MachinePool", patch: "spec: {template: {spec: {bootstrap: {configRef: null}}}}", want: "spec.template.spec.bootstrap"},
		{name: "bootstrap configRef without name", kind: "MachinePool", patch: "spec: {template: {spec: {bootstrap: {configRef: {name: null}}}}}", want: "spec.template.spec.bootstrap.configRef.name"},
		{name: "empty providerIDList entry", kind: "MachinePool", patch: `spec: {providerIDList: ["azure:///a", ""]}`, want: "spec.providerIDList[1]"},
		{name: "empty failureDomains entry", kind: "MachinePool", patch: `spec: {failureDomains: [""]}`, want: "spec.failureDomains[0]"},

		// Machine and Cluster.
		{name: "machine valid", kind: "Machine"},
		{name: "machine malformed version", kind: "Machine", patch: "spec: {version: v1.2.3.4}", want: "spec.version"},
		{name: "machine infrastructureRef without kind", kind: "Machine", patch: "spec: {infrastructureRef: {kind: null}}", want: "spec.infrastructureRef.kind"},
		{name: "machine changing clusterName", kind: "Machine", update: "spec: {clusterName: other}", want: "clusterName is immutable"},
		{name: "machine empty providerID", kind: "Machine", patch: `spec: {providerID: ""}`, want: "spec.providerID"},
		{name: "cluster valid", kind: "Cluster"},

		// MachineHealthCheck (upstream's webhook rules; external remediation is not served).
		{name: "machinehealthcheck valid", kind: "MachineHealthCheck"},
		{name: "machinehealthcheck empty selector", kind: "MachineHealthCheck", patch: "spec: {selector: {matchLabels: null}}", want: "spec.selector"},
		{name: "machinehealthcheck selector names another cluster", kind: "MachineHealthCheck",
			patch: "spec: {selector: {matchLabels: {cluster.x-k8s.io/cluster-name: other}}}", want: "spec.selector"},
		{name: "machinehealthcheck changing clusterName", kind: "MachineHealthCheck", update: "spec: {clusterName: other}", want: "spec.clusterName"},
		{name: "machinehealthcheck nodeStartupTimeout under 30s", kind: "MachineHealthCheck", patch: "spec: {nodeStartupTimeout: 10s}", want: "spec.checks.nodeStartupTimeoutSeconds",
			v1beta2Patch: "spec: {checks: {nodeStartupTimeoutSeconds: 10}}", v1beta2Want: "spec.checks.nodeStartupTimeoutSeconds"},
		{name: "machinehealthcheck maxUnhealthy not a percentage", kind: "MachineHealthCheck", patch: "spec: {maxUnhealthy: abc}", want: "spec.remediation.triggerIf.unhealthyLessThanOrEqualTo",
			v1beta2Patch: "spec: {remediation: {triggerIf: {unhealthyLessThanOrEqualTo: abc}}}", v1beta2Want: "spec.remediation.triggerIf.unhealthyLessThanOrEqualTo"},
		{name: "machinehealthcheck external remediation", kind: "MachineHealthCheck",
			patch: "spec: {remediationTemplate: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3RemediationTemplate, name: m3}}",
			want:  "spec.remediation.templateRef", fix: "external remediation is not served",
			v1beta2Patch: "spec: {remediation: {templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3RemediationTemplate, name: m3}}}",
			v1beta2Want:  "spec.remediation.templateRef"},
		{name: "cluster availability gate bad polarity", kind: "Cluster", patch: "spec: {availabilityGates: [{conditionType: Foo, polarity: Sideways}]}", want: "spec.availabilityGates[0].polarity"},

		// AzureMachinePool strategy.
		{name: "azure valid", kind: "AzureMachinePool"},
		{name: "azure maxSurge 25% is valid", kind: "AzureMachinePool", patch: strategy("{maxSurge: 25%, maxUnavailable: 1}")},
		{name: "azure maxSurge 100% is valid", kind: "AzureMachinePool", patch: strategy(`{maxSurge: "100%", maxUnavailable: 0}`)},
		{name: "azure maxSurge 0 with maxUnavailable 1 is valid", kind: "AzureMachinePool", patch: strategy("{maxSurge: 0, maxUnavailable: 1}")},
		{name: "azure maxSurge 0% with maxUnavailable 10% is valid", kind: "AzureMachinePool", patch: strategy(`{maxSurge: "0%", maxUnavailable: "10%"}`)},
		{name: "azure flexible orchestration is valid", kind: "AzureMachinePool", patch: "spec: {orchestrationMode: Flexible}"},
		{name: "maxSurge negative string", kind: "AzureMachinePool", patch: strategy(`{maxSurge: "-1"}`), want: "spec.strategy.rollingUpdate.maxSurge"},
		{name: "maxSurge negative int", kind: "AzureMachinePool", patch: strategy("{maxSurge: -1}"), want: "spec.strategy.rollingUpdate.maxSurge"},
		{name: "maxSurge not a number", kind: "AzureMachinePool", patch: strategy("{maxSurge: abc}"), want: "spec.strategy.rollingUpdate.maxSurge"},
		{name: "maxSurge fractional percent", kind: "AzureMachinePool", patch: strategy(`{maxSurge: "5.5%"}`), want: "spec.strategy.rollingUpdate.maxSurge"},
		{name: "maxSurge percentage over 100", kind: "AzureMachinePool", patch: strategy(`{maxSurge: "150%"}`), want: "spec.strategy.rollingUpdate.maxSurge"},
		{name: "maxUnavailable not a number", kind: "AzureMachinePool", patch: strategy("{maxUnavailable: abc}"), want: "spec.strategy.rollingUpdate.maxUnavailable"},
		{name: "maxUnavailable negative string", kind: "AzureMachinePool", patch: strategy(`{maxUnavailable: "-1"}`), want: "spec.strategy.rollingUpdate.maxUnavailable"},
		{name: "maxUnavailable percent without number", kind: "AzureMachinePool", patch: strategy(`{maxUnavailable: "%"}`), want: "spec.strategy.rollingUpdate.maxUnavailable"},
		{name: "maxSurge and maxUnavailable both 0", kind: "AzureMachinePool", patch: strategy("{maxSurge: 0, maxUnavailable: 0}"), want: "maxSurge and maxUnavailable must not both be zero"},
		{name: "maxSurge 0 and maxUnavailable 0%", kind: "AzureMachinePool", patch: strategy(`{maxSurge: 0, maxUnavailable: "0%"}`), want: "maxSurge and maxUnavailable must not both be zero"},
		{name: "maxSurge 0 with default maxUnavailable", kind: "AzureMachinePool", patch: strategy("{maxSurge: 0}"), want: "spec.strategy.rollingUpdate.maxUnavailable"},
		{name: "deletePolicy outside enum", kind: "AzureMachinePool", patch: strategy("{deletePolicy: Biggest}"), want: "spec.strategy.rollingUpdate.deletePolicy"},
		{name: "strategy type outside enum", kind: "AzureMachinePool", patch: "spec: {strategy: {type: Recreate}}", want: "spec.strategy.type"},
		{name: "orchestrationMode outside enum", kind: "AzureMachinePool", patch: "spec: {orchestrationMode: Hybrid}", want: "spec.orchestrationMode"},
		{name: "identity outside enum", kind: "AzureMachinePool", patch: "spec: {identity: Everyone}", want: "spec.identity"},
		{name: "azure osDisk diskSizeGB 0", kind: "AzureMachinePool", patch: "spec: {template: {osDisk: {diskSizeGB: 0}}}", want: "spec.template.osDisk.diskSizeGB"},
		{name: "azure dataDisk diskSizeGB 0", kind: "AzureMachinePool", patch: "spec: {template: {dataDisks: [{nameSuffix: data, diskSizeGB: 0}]}}", want: "spec.template.dataDisks[0].diskSizeGB"},
		{name: "azure osDisk without osType", kind: "AzureMachinePool", patch: "spec: {template: {osDisk: {osType: null}}}", want: "spec.template.osDisk.osType"},
		{name: "azure caching type outside enum", kind: "AzureMachinePool", patch: "spec: {template: {osDisk: {cachingType: Sometimes}}}", want: "spec.template.osDisk.cachingType"},
		{name: "azure terminateNotificationTimeout below 5", kind: "AzureMachinePool", patch: "spec: {template: {terminateNotificationTimeout: 3}}", want: "spec.template.terminateNotificationTimeout"},
		{name: "azure terminateNotificationTimeout above 15", kind: "AzureMachinePool", patch: "spec: {template: {terminateNotificationTimeout: 20}}", want: "spec.template.terminateNotificationTimeout"},
		{name: "azure spot eviction policy outside enum", kind: "AzureMachinePool", patch: "spec: {template: {spotVMOptions: {evictionPolicy: Hibernate}}}", want: "spec.template.spotVMOptions.evictionPolicy"},
		{name: "azure platformFaultDomainCount 0", kind: "AzureMachinePool", patch: "spec: {platformFaultDomainCount: 0}", want: "spec.platformFaultDomainCount"},
		{name: "azure empty providerIDList entry", kind: "AzureMachinePool", patch: `spec: {providerIDList: [""]}`, want: "spec.providerIDList[0]"},
		{name: "azure empty location", kind: "AzureMachinePool", patch: `spec: {location: ""}`, want: "spec.location"},
		{name: "azure pool machine without providerID", kind: "AzureMachinePoolMachine", patch: "spec: {providerID: null}", want: "spec.providerID"},

		// AzureCluster.
		{name: "azurecluster valid", kind: "AzureCluster"},
		{name: "azurecluster minimal (location only) is valid", kind: "AzureCluster", patch: "spec: {subscriptionID: null, resourceGroup: null, identityRef: null, networkSpec: null}"},
		{name: "azurecluster CAPZ networking extras are kept", kind: "AzureCluster", patch: `spec: {networkSpec: {apiServerLB: {type: Internal, frontendIPs: [{name: lb-ip, privateIP: 10.0.0.100}]}, nodeOutboundLB: {frontendIPsCount: 1}, privateDNSZoneName: demo.internal, vnet: {peerings: [{resourceGroup: hub, remoteVnetName: hub-vnet}]}, subnets: [{name: node-subnet, role: node, securityGroup: {name: node-nsg}, routeTable: {name: node-rt}, natGateway: {name: node-nat}}]}, bastionSpec: {azureBastion: {}}, additionalTags: {team: pools}, azureEnvironment: AzurePublicCloud}`},
		{name: "azurecluster resourceGroup with periods and parentheses is valid", kind: "AzureCluster", patch: "spec: {resourceGroup: rg.prod_(eu)-1}"},
		{name: "azurecluster resourceGroup with non-ASCII letters is valid", kind: "AzureCluster", patch: "spec: {resourceGroup: grupo-producción}"},
		{name: "azurecluster subnet role cluster is valid", kind: "AzureCluster", patch: "spec: {networkSpec: {subnets: [{name: shared, role: cluster}]}}"},
		{name: "azurecluster without spec", kind: "AzureCluster", patch: "spec: null", want: "spec", fix: "Required value"},
		{name: "azurecluster subscriptionID not a GUID", kind: "AzureCluster", patch: "spec: {subscriptionID: my-subscription}", want: "spec.subscriptionID", fix: "must be an Azure subscription GUID"},
		{name: "azurecluster subscriptionID GUID in braces", kind: "AzureCluster", patch: "spec: {subscriptionID: '{11111111-1111-1111-1111-111111111111}'}", want: "spec.subscriptionID", fix: "GUID such as"},
		{name: "azurecluster missing location", kind: "AzureCluster", patch: "spec: {location: null}", want: "spec.location", fix: "Required value"},
		{name: "azurecluster location display name", kind: "AzureCluster", patch: "spec: {location: East US}", want: "spec.location", fix: "lowercase letters and digits without spaces, such as eastus"},
		{name: "azurecluster location in capitals", kind: "AzureCluster", patch: "spec: {location: EastUS}", want: "spec.location", fix: "lowercase"},
		{name: "azurecluster resourceGroup ending in a period", kind: "AzureCluster", patch: "spec: {resourceGroup: rg.}", want: "spec.resourceGroup", fix: "not ending in a period"},
		{name: "azurecluster resourceGroup with a space", kind: "AzureCluster", patch: "spec: {resourceGroup: my rg}", want: "spec.resourceGroup", fix: "letters, digits, underscores, hyphens, periods or parentheses"},
		{name: "azurecluster resourceGroup over 90 characters", kind: "AzureCluster", patch: "spec: {resourceGroup: " + strings.Repeat("r", 91) + "}", want: "spec.resourceGroup", fix: "90"},
		{name: "azurecluster empty resourceGroup", kind: "AzureCluster", patch: `spec: {resourceGroup: ""}`, want: "spec.resourceGroup", fix: "1 to 90"},
		{name: "azurecluster vnet name starting with a hyphen", kind: "AzureCluster", patch: "spec: {networkSpec: {vnet: {name: -vnet}}}", want: "spec.networkSpec.vnet.name", fix: "starting with a letter or digit"},
		{name: "azurecluster vnet resourceGroup with a slash", kind: "AzureCluster", patch: "spec: {networkSpec: {vnet: {resourceGroup: a/b}}}", want: "spec.networkSpec.vnet.resourceGroup", fix: "letters, digits"},
		{name: "azurecluster vnet cidr not a CIDR", kind: "AzureCluster", patch: `spec: {networkSpec: {vnet: {cidrBlocks: ["10.0.0.0/33"]}}}`, want: "spec.networkSpec.vnet.cidrBlocks", fix: "CIDR blocks such as 10.0.0.0/8"},
		{name: "azurecluster subnet role outside enum", kind: "AzureCluster", patch: "spec: {networkSpec: {subnets: [{name: workers, role: worker}]}}", want: "spec.networkSpec.subnets[0].role", fix: `"node"`},
		{name: "azurecluster subnet without role", kind: "AzureCluster", patch: "spec: {networkSpec: {subnets: [{name: workers}]}}", want: "spec.networkSpec.subnets[0].role", fix: "Required value"},
		{name: "azurecluster subnet without name", kind: "AzureCluster", patch: "spec: {networkSpec: {subnets: [{role: node}]}}", want: "spec.networkSpec.subnets[0].name", fix: "Required value"},
		{name: "azurecluster subnet name with a space", kind: "AzureCluster", patch: "spec: {networkSpec: {subnets: [{name: node subnet, role: node}]}}", want: "spec.networkSpec.subnets[0].name", fix: "letters, digits, underscores, periods or hyphens"},
		{name: "azurecluster duplicate subnet names", kind: "AzureCluster", patch: "spec: {networkSpec: {subnets: [{name: s, role: node}, {name: s, role: control-plane}]}}", want: "spec.networkSpec.subnets", fix: "names must be unique"},
		{name: "azurecluster subnet cidr not a CIDR", kind: "AzureCluster", patch: `spec: {networkSpec: {subnets: [{name: s, role: node, cidrBlocks: ["10.1.0.0"]}]}}`, want: "spec.networkSpec.subnets[0].cidrBlocks", fix: "CIDR blocks"},
		{name: "azurecluster identityRef to a Secret", kind: "AzureCluster", patch: "spec: {identityRef: {kind: Secret, apiVersion: v1}}", want: "spec.identityRef.kind", fix: "must be AzureClusterIdentity"},
		{name: "azurecluster identityRef without name", kind: "AzureCluster", patch: "spec: {identityRef: {name: null}}", want: "spec.identityRef.name", fix: "must name an AzureClusterIdentity"},
		{name: "azurecluster azureEnvironment outside enum", kind: "AzureCluster", patch: "spec: {azureEnvironment: AzureMoonCloud}", want: "spec.azureEnvironment", fix: `"AzurePublicCloud"`},

		// AzureClusterIdentity.
		{name: "azure identity valid", kind: "AzureClusterIdentity"},
		{name: "azure identity WorkloadIdentity without clientSecret is valid", kind: "AzureClusterIdentity", patch: "spec: {type: WorkloadIdentity, clientSecret: null}"},
		{name: "azure identity clientSecret with namespace is valid", kind: "AzureClusterIdentity", patch: "spec: {clientSecret: {namespace: other}}"},
		{name: "azure identity allowedNamespaces list and selector are valid", kind: "AzureClusterIdentity", patch: "spec: {allowedNamespaces: {list: [team-a, default], selector: {matchLabels: {azure: allowed}}}}"},
		{name: "azure identity ServicePrincipal without clientSecret", kind: "AzureClusterIdentity", patch: "spec: {clientSecret: null}", want: "spec.clientSecret", fix: "must name the Secret holding the service principal's secret"},
		{name: "azure identity ManualServicePrincipal clientSecret without name", kind: "AzureClusterIdentity", patch: "spec: {type: ManualServicePrincipal, clientSecret: {name: null, namespace: default}}", want: "spec.clientSecret", fix: "clientSecret.name must name the Secret"},
		{name: "azure identity ServicePrincipalCertificate empty clientSecret name", kind: "AzureClusterIdentity", patch: `spec: {type: ServicePrincipalCertificate, clientSecret: {name: ""}}`, want: "spec.clientSecret", fix: "clientSecret.name"},
		{name: "azure identity ServicePrincipalCertificate with certPath and no clientSecret is valid", kind: "AzureClusterIdentity", patch: "spec: {type: ServicePrincipalCertificate, certPath: /etc/azure/sp.pem, clientSecret: null}"},
		{name: "azure identity without spec", kind: "AzureClusterIdentity", patch: "spec: null", want: "spec", fix: "Required value"},
		{name: "azure identity type outside enum", kind: "AzureClusterIdentity", patch: "spec: {type: Password}", want: "spec.type", fix: `"ServicePrincipal"`},
		{name: "azure identity missing type", kind: "AzureClusterIdentity", patch: "spec: {type: null}", want: "spec.type", fix: "Required value"},
		{name: "azure identity clientID not a GUID", kind: "AzureClusterIdentity", patch: "spec: {clientID: my-app}", want: "spec.clientID", fix: "application (client) ID, a GUID"},
		{name: "azure identity missing clientID", kind: "AzureClusterIdentity", patch: "spec: {clientID: null}", want: "spec.clientID", fix: "Required value"},
		{name: "azure identity tenantID a domain name", kind: "AzureClusterIdentity", patch: "spec: {tenantID: contoso.onmicrosoft.com}", want: "spec.tenantID", fix: "tenant ID, a GUID"},
		{name: "azure identity missing tenantID", kind: "AzureClusterIdentity", patch: "spec: {tenantID: null}", want: "spec.tenantID", fix: "Required value"},
		{name: "azure identity UserAssignedIdentityCredential without path", kind: "AzureClusterIdentity", patch: "spec: {type: UserAssignedIdentityCredential, clientSecret: null}", want: "spec.userAssignedIdentityCredentialsPath", fix: "must be set when type is UserAssignedIdentityCredential"},
		{name: "azure identity credentials cloud type outside enum", kind: "AzureClusterIdentity", patch: "spec: {userAssignedIdentityCredentialsCloudType: mars}", want: "spec.userAssignedIdentityCredentialsCloudType", fix: `"public"`},
		{name: "azure identity allowed namespace not a name", kind: "AzureClusterIdentity", patch: "spec: {allowedNamespaces: {list: [Team_A]}}", want: "spec.allowedNamespaces.list", fix: "namespace names"},

		// GCPMachinePool and GCPCluster.
		{name: "gcp valid", kind: "GCPMachinePool"},
		{name: "gcp confidential with Terminate is valid", kind: "GCPMachinePool", patch: "spec: {confidentialCompute: Enabled, onHostMaintenance: Terminate}"},
		{name: "gcp without instanceType", kind: "GCPMachinePool", patch: "spec: {instanceType: null}", want: "spec.instanceType"},
		{name: "gcp instanceType not a name", kind: "GCPMachinePool", patch: "spec: {instanceType: N2_Standard}", want: "spec.instanceType"},
		{name: "gcp confidential without Terminate", kind: "GCPMachinePool", patch: "spec: {confidentialCompute: Enabled}", want: "spec.onHostMaintenance", fix: "onHostMaintenance Terminate"},
		{name: "gcp spot that migrates", kind: "GCPMachinePool", patch: "spec: {provisioningModel: Spot, onHostMaintenance: Migrate}", want: "spec.onHostMaintenance", fix: "Spot"},
		{name: "gcp rootDeviceType outside enum", kind: "GCPMachinePool", patch: "spec: {rootDeviceType: pd-fast}", want: "spec.rootDeviceType"},
		{name: "gcp rootDeviceSize below 10", kind: "GCPMachinePool", patch: "spec: {rootDeviceSize: 5}", want: "spec.rootDeviceSize"},
		{name: "gcp user-data in additionalMetadata", kind: "GCPMachinePool", patch: "spec: {additionalMetadata: [{key: user-data, value: x}]}", want: "spec.additionalMetadata", fix: "bootstrap data"},
		{name: "gcp maxSurge negative", kind: "GCPMachinePool", patch: strategy("{maxSurge: -1}"), want: "spec.strategy.rollingUpdate.maxSurge"},
		{name: "gcp pool machine without providerID", kind: "GCPMachinePoolMachine", patch: "spec: {providerID: null}", want: "spec.providerID"},
		{name: "gcpcluster valid", kind: "GCPCluster"},
		{name: "gcpcluster project in capitals", kind: "GCPCluster", patch: "spec: {project: MyProject}", want: "spec.project"},
		{name: "gcpcluster without region", kind: "GCPCluster", patch: "spec: {region: null}", want: "spec.region"},
		{name: "gcpcluster region a zone", kind: "GCPCluster", patch: "spec: {region: us-central1-a}", want: "spec.region"},

		// AWSMachinePool.
		{name: "aws valid", kind: "AWSMachinePool"},
		{name: "aws minSize equal to maxSize is valid", kind: "AWSMachinePool", patch: "spec: {minSize: 3, maxSize: 3}"},
		{name: "aws minSize 0 is valid", kind: "AWSMachinePool", patch: "spec: {minSize: 0}"},
		{name: "aws subnets as objects are valid", kind: "AWSMachinePool", patch: "spec: {subnets: [{id: subnet-1}, {filters: [{name: 'tag:Name', values: [a]}]}]}"},
		{name: "aws minSize greater than maxSize", kind: "AWSMachinePool", patch: "spec: {minSize: 5, maxSize: 2}", want: "spec.minSize"},
		{name: "aws negative minSize", kind: "AWSMachinePool", patch: "spec: {minSize: -1}", want: "spec.minSize"},
		{name: "aws negative maxSize", kind: "AWSMachinePool", patch: "spec: {maxSize: -1}", want: "spec.maxSize"},
		{name: "aws missing maxSize", kind: "AWSMachinePool", patch: "spec: {maxSize: null}", want: "spec.maxSize"},
		{name: "aws rootVolume smaller than 8GiB", kind: "AWSMachinePool", patch: "spec: {awsLaunchTemplate: {rootVolume: {size: 4}}}", want: "spec.awsLaunchTemplate.rootVolume.size"},
		{name: "aws volume type outside enum", kind: "AWSMachinePool", patch: "spec: {awsLaunchTemplate: {rootVolume: {size: 20, type: floppy}}}", want: "spec.awsLaunchTemplate.rootVolume.type"},
		{name: "aws availabilityZoneSubnetType outside enum", kind: "AWSMachinePool", patch: "spec: {availabilityZoneSubnetType: secret}", want: "spec.availabilityZoneSubnetType"},
		{name: "aws minHealthyPercentage over 100", kind: "AWSMachinePool", patch: "spec: {refreshPreferences: {minHealthyPercentage: 101}}", want: "spec.refreshPreferences.minHealthyPercentage"},
		{name: "aws onDemandPercentageAboveBaseCapacity over 100", kind: "AWSMachinePool", patch: "spec: {mixedInstancesPolicy: {instancesDistribution: {onDemandPercentageAboveBaseCapacity: 150}}}", want: "spec.mixedInstancesPolicy.instancesDistribution.onDemandPercentageAboveBaseCapacity"},
		{name: "aws spot max price not a decimal", kind: "AWSMachinePool", patch: "spec: {awsLaunchTemplate: {spotMarketOptions: {maxPrice: cheap}}}", want: "spec.awsLaunchTemplate.spotMarketOptions.maxPrice"},
		{name: "aws httpTokens outside enum", kind: "AWSMachinePool", patch: "spec: {awsLaunchTemplate: {instanceMetadataOptions: {httpTokens: sometimes}}}", want: "spec.awsLaunchTemplate.instanceMetadataOptions.httpTokens"},
		{name: "aws empty providerIDList entry", kind: "AWSMachinePool", patch: `spec: {providerIDList: [""]}`, want: "spec.providerIDList[0]"},

		// AzureManagedMachinePool.
		{name: "aks valid", kind: "AzureManagedMachinePool"},
		{name: "aks mode outside enum", kind: "AzureManagedMachinePool", patch: "spec: {mode: Both}", want: "spec.mode"},
		{name: "aks agent pool name with upper case", kind: "AzureManagedMachinePool", patch: "spec: {name: Pool0}", want: "spec.name"},
		{name: "aks unserved field", kind: "AzureManagedMachinePool", patch: "spec: {enableUltraSSD: true}", want: "enableUltraSSD"},
		{name: "aks Spot System pool", kind: "AzureManagedMachinePool", patch: "spec: {mode: System, scaleSetPriority: Spot}", want: "spec.scaleSetPriority"},
		{name: "aks Windows not served", kind: "AzureManagedMachinePool", patch: "spec: {osType: Windows}", want: "spec.osType"},
		{name: "aks changing sku", kind: "AzureManagedMachinePool", update: "spec: {sku: Standard_D4s_v5}", want: "spec.sku is immutable"},
		{name: "aks changing osDiskSizeGB", kind: "AzureManagedMachinePool", update: "spec: {osDiskSizeGB: 128}", want: "spec.osDiskSizeGB is immutable"},
		{name: "aks changing availabilityZones", kind: "AzureManagedMachinePool", update: `spec: {availabilityZones: ["1"]}`, want: "spec.availabilityZones is immutable"},
		{name: "aks adding maxPods", kind: "AzureManagedMachinePool", update: "spec: {maxPods: 50}", want: "spec.maxPods is immutable"},
		{name: "aks changing mode is valid", kind: "AzureManagedMachinePool", update: "spec: {mode: System}"},
		{name: "aks changing nodeLabels is valid", kind: "AzureManagedMachinePool", update: "spec: {nodeLabels: {tier: web}}"},

		// AWSManagedMachinePool.
		{name: "eks valid", kind: "AWSManagedMachinePool"},
		{name: "eks maxUnavailablePercentage 100 is valid", kind: "AWSManagedMachinePool", patch: "spec: {updateConfig: {maxUnavailablePercentage: 100}}"},
		{name: "eks scaling minSize greater than maxSize", kind: "AWSManagedMachinePool", patch: "spec: {scaling: {minSize: 5, maxSize: 2}}", want: "spec.scaling.minSize"},
		{name: "eks negative scaling minSize", kind: "AWSManagedMachinePool", patch: "spec: {scaling: {minSize: -1}}", want: "spec.scaling.minSize"},
		{name: "eks maxUnavailable and maxUnavailablePercentage both set", kind: "AWSManagedMachinePool", patch: "spec: {updateConfig: {maxUnavailable: 1, maxUnavailablePercentage: 10}}", want: "spec.updateConfig.maxUnavailablePercentage"},
		{name: "eks maxUnavailablePercentage over 100", kind: "AWSManagedMachinePool", patch: "spec: {updateConfig: {maxUnavailablePercentage: 101}}", want: "spec.updateConfig.maxUnavailablePercentage"},
		{name: "eks maxUnavailable 0", kind: "AWSManagedMachinePool", patch: "spec: {updateConfig: {maxUnavailable: 0}}", want: "spec.updateConfig.maxUnavailable"},
		{name: "eks taint effect in Kubernetes spelling", kind: "AWSManagedMachinePool", patch: "spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}", want: "spec.taints[0].effect"},
		{name: "eks capacityType outside enum", kind: "AWSManagedMachinePool", patch: "spec: {capacityType: reserved}", want: "spec.capacityType"},
		{name: "eks amiType outside enum", kind: "AWSManagedMachinePool", patch: "spec: {amiType: WINDOWS_95}", want: "spec.amiType"},
		{name: "eks diskSize 0", kind: "AWSManagedMachinePool", patch: "spec: {diskSize: 0}", want: "spec.diskSize"},
		{name: "eks malformed amiVersion", kind: "AWSManagedMachinePool", patch: "spec: {amiVersion: latest}", want: "spec.amiVersion"},
		{name: "eks changing eksNodegroupName", kind: "AWSManagedMachinePool", patch: "spec: {eksNodegroupName: ng-a}", update: "spec: {eksNodegroupName: ng-b}", want: "eksNodegroupName is immutable"},
		{name: "eks changing instanceType", kind: "AWSManagedMachinePool", patch: "spec: {instanceType: m5.large}", update: "spec: {instanceType: m5.xlarge}", want: "instanceType is immutable"},
		{name: "eks changing diskSize", kind: "AWSManagedMachinePool", patch: "spec: {diskSize: 20}", update: "spec: {diskSize: 40}", want: "diskSize is immutable"},
		{name: "eks changing amiType", kind: "AWSManagedMachinePool", update: "spec: {amiType: AL2_ARM_64}", want: "amiType is immutable"},
		{name: "eks changing capacityType", kind: "AWSManagedMachinePool", update: "spec: {capacityType: spot}", want: "capacityType is immutable"},
		{name: "eks changing subnetIDs", kind: "AWSManagedMachinePool", patch: "spec: {subnetIDs: [subnet-a]}", update: "spec: {subnetIDs: [subnet-b]}", want: "subnetIDs is immutable"},
		{name: "eks changing roleName", kind: "AWSManagedMachinePool", patch: "spec: {roleName: a}", update: "spec: {roleName: b}", want: "roleName is immutable"},
		{name: "eks changing remoteAccess", kind: "AWSManagedMachinePool", patch: "spec: {remoteAccess: {sshKeyName: a}}", update: "spec: {remoteAccess: {sshKeyName: b}}", want: "remoteAccess is immutable"},
		{name: "eks scaling and labels change in place", kind: "AWSManagedMachinePool", patch: "spec: {instanceType: m5.large}", update: "spec: {scaling: {minSize: 1, maxSize: 9}, labels: {a: b}}"},

		// LocalMachinePool.
		{name: "local valid", kind: "LocalMachinePool"},
		{name: "local failureRate 0.05 is valid", kind: "LocalMachinePool", patch: `spec: {simulation: {failureRate: "0.05", bootDelay: 2s, bootJitter: 500ms}}`},
		{name: "local failureRate 1 is valid", kind: "LocalMachinePool", patch: `spec: {simulation: {failureRate: "1"}}`},
		{name: "local failureRate above 1", kind: "LocalMachinePool", patch: `spec: {simulation: {failureRate: "1.5"}}`, want: "spec.simulation.failureRate"},
		{name: "local negative failureRate", kind: "LocalMachinePool", patch: `spec: {simulation: {failureRate: "-0.1"}}`, want: "spec.simulation.failureRate"},
		{name: "local failureRate as a percentage", kind: "LocalMachinePool", patch: `spec: {simulation: {failureRate: "5%"}}`, want: "spec.simulation.failureRate"},
		{name: "local maxSurge over 100%", kind: "LocalMachinePool", patch: strategy(`{maxSurge: "101%"}`), want: "spec.strategy.rollingUpdate.maxSurge"},
		{name: "local both zero", kind: "LocalMachinePool", patch: strategy(`{maxSurge: "0%", maxUnavailable: 0}`), want: "maxSurge and maxUnavailable must not both be zero"},
		{name: "local deletePolicy outside enum", kind: "LocalMachinePool", patch: strategy("{deletePolicy: oldest}"), want: "spec.strategy.rollingUpdate.deletePolicy"},
		{name: "local empty zone", kind: "LocalMachinePool", patch: `spec: {template: {zones: [""]}}`, want: "spec.template.zones[0]"},
		{name: "local empty providerIDList entry", kind: "LocalMachinePool", patch: `spec: {providerIDList: [""]}`, want: "spec.providerIDList[0]"},
		{name: "local pool machine empty providerID", kind: "LocalMachinePoolMachine", patch: `spec: {providerID: ""}`, want: "spec.providerID"},

		// KubeadmConfig.
		{name: "kubeadm valid", kind: "KubeadmConfig"},
		{name: "kubeadm contentFrom alone is valid", kind: "KubeadmConfig", patch: "spec: {files: [{path: /etc/x, contentFrom: {secret: {name: s, key: k}}}]}"},
		{name: "kubeadm taints of every effect are valid", kind: "KubeadmConfig", patch: "spec: {joinConfiguration: {nodeRegistration: {taints: [{key: a, effect: NoSchedule}, {key: b, effect: PreferNoSchedule}, {key: c, effect: NoExecute}]}}}"},
		{name: "kubeadm discovery by file alone is valid", kind: "KubeadmConfig", patch: "spec: {joinConfiguration: {discovery: {file: {kubeConfigPath: /k}}}}"},
		{name: "kubeadm passwdFrom alone and verbosity 0 are valid", kind: "KubeadmConfig", patch: "spec: {users: [{name: u, passwdFrom: {secret: {name: s, key: k}}}], verbosity: 0}"},
		{name: "kubeadm file with content and contentFrom", kind: "KubeadmConfig", patch: "spec: {files: [{path: /etc/x, content: a, contentFrom: {secret: {name: s, key: k}}}]}", want: "spec.files[0].contentFrom"},
		{name: "kubeadm contentFrom without key", kind: "KubeadmConfig", patch: "spec: {files: [{path: /etc/x, contentFrom: {secret: {name: s}}}]}", want: "spec.files[0].contentFrom.secret.key"},
		{name: "kubeadm file without path", kind: "KubeadmConfig", patch: "spec: {files: [{content: a}]}", want: "spec.files[0].path"},
		{name: "kubeadm bad file encoding", kind: "KubeadmConfig", patch: "spec: {files: [{path: /etc/x, content: a, encoding: rot13}]}", want: "spec.files[0].encoding"},
		{name: "kubeadm bad format", kind: "KubeadmConfig", patch: "spec: {format: yaml}", want: "spec.format"},
		{name: "kubeadm bad taint effect", kind: "KubeadmConfig", patch: "spec: {joinConfiguration: {nodeRegistration: {taints: [{key: a, effect: Sometimes}]}}}", want: "spec.joinConfiguration.nodeRegistration.taints"},
		{name: "kubeadm bad imagePullPolicy", kind: "KubeadmConfig", patch: "spec: {joinConfiguration: {nodeRegistration: {imagePullPolicy: Maybe}}}", want: "spec.joinConfiguration.nodeRegistration.imagePullPolicy"},
		{name: "kubeadm discovery with bootstrapToken and file", kind: "KubeadmConfig", patch: "spec: {joinConfiguration: {discovery: {bootstrapToken: {token: abcdef.0123456789abcdef}, file: {kubeConfigPath: /k}}}}", want: "spec.joinConfiguration.discovery"},
		{name: "kubeadm user with passwd and passwdFrom", kind: "KubeadmConfig", patch: "spec: {users: [{name: u, passwd: x, passwdFrom: {secret: {name: s, key: k}}}]}", want: "spec.users[0].passwdFrom"},
		{name: "kubeadm negative verbosity", kind: "KubeadmConfig", patch: "spec: {verbosity: -1}", want: "spec.verbosity"},

		// KubeadmConfigTemplate: the same rules under spec.template.spec.
		{name: "kubeadm template valid", kind: "KubeadmConfigTemplate"},
		{name: "kubeadm template file with content and contentFrom", kind: "KubeadmConfigTemplate", patch: "spec: {template: {spec: {files: [{path: /etc/x, content: a, contentFrom: {secret: {name: s, key: k}}}]}}}", want: "spec.template.spec.files[0].contentFrom"},
		{name: "kubeadm template bad taint effect", kind: "KubeadmConfigTemplate", patch: "spec: {template: {spec: {joinConfiguration: {nodeRegistration: {taints: [{key: a, effect: NoSchedule}, {key: b, effect: Sometimes}]}}}}}", want: "spec.template.spec.joinConfiguration.nodeRegistration.taints[1].effect"},
		{name: "kubeadm template bad init taint effect", kind: "KubeadmConfigTemplate", patch: "spec: {template: {spec: {initConfiguration: {nodeRegistration: {taints: [{key: a, effect: Sometimes}]}}}}}", want: "spec.template.spec.initConfiguration.nodeRegistration.taints[0].effect"},
		{name: "kubeadm template discovery with bootstrapToken and file", kind: "KubeadmConfigTemplate", patch: "spec: {template: {spec: {joinConfiguration: {discovery: {bootstrapToken: {token: abcdef.0123456789abcdef}, file: {kubeConfigPath: /k}}}}}}", want: "spec.template.spec.joinConfiguration.discovery"},
		{name: "kubeadm template user with passwd and passwdFrom", kind: "KubeadmConfigTemplate", patch: "spec: {template: {spec: {users: [{name: u}, {name: v, passwd: x, passwdFrom: {secret: {name: s, key: k}}}]}}}", want: "spec.template.spec.users[1].passwdFrom"},
		{name: "kubeadm template negative verbosity", kind: "KubeadmConfigTemplate", patch: "spec: {template: {spec: {verbosity: -1}}}", want: "spec.template.spec.verbosity"},
	}

	ns := env.NewNamespace(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, ok := bases[tt.kind]
			if !ok {
				t.Fatalf("no base object for kind %s", tt.kind)
			}
			t.Run("v1beta1", func(t *testing.T) {
				checkAdmission(t, ns, fmt.Sprintf("row-%d", i), base, tt.patch, tt.update, tt.want, tt.fix)
			})
			base, ok = v1beta2Bases[tt.kind]
			if !ok {
				return
			}
			patch, want := tt.patch, tt.want
			if tt.v1beta2Patch != "" {
				patch = tt.v1beta2Patch
			}
			if tt.v1beta2Want != "" {
				want = tt.v1beta2Want
			}
			t.Run("v1beta2", func(t *testing.T) {
				checkAdmission(t, ns, fmt.Sprintf("row-%d-v1beta2", i), base, patch, tt.update, want, tt.fix)
			})
		})
	}
}

// checkAdmission creates the base object patched, then when update is set updates it with
// update applied, and checks that the API server refuses the last write with a message
// containing want and fix, or accepts it when want is empty.
func checkAdmission(t *testing.T, ns, name, base, patch, update, want, fix string) {
	t.Helper()
	obj := fromYAML(t, base)
	obj.SetNamespace(ns)
	obj.SetName(name)
	mergePatch(t, obj.Object, patch)

	err := env.Client.Create(ctx(), obj)
	if update != "" {
		if err != nil {
			t.Fatalf("creating the object to update: %v", err)
		}
		mergePatch(t, obj.Object, update)
		err = env.Client.Update(ctx(), obj)
	}
	switch {
	case want == "" && err != nil:
		t.Fatalf("want accepted, got: %v\nobject: %s", err, mustJSON(obj.Object))
	case want != "" && err == nil:
		t.Fatalf("want refused with %q, got accepted\nobject: %s", want, mustJSON(obj.Object))
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("want refusal containing %q, got: %v", want, err)
	case fix != "" && !strings.Contains(err.Error(), fix):
		t.Fatalf("want the refusal of %s to say %q, got: %v", want, fix, err)
	case err != nil:
		t.Logf("refused as expected: %v", err)
	}
}
