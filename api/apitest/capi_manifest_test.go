package apitest

import (
	"strings"
	"testing"
)

// fullManifest uses most fields a Cluster API v1beta1 user writes for a pool-based
// cluster, including those mpool does not act on yet.
const fullManifest = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: full
  labels:
    cni: calico
spec:
  paused: false
  clusterNetwork:
    apiServerPort: 6443
    pods:
      cidrBlocks: ["192.168.0.0/16"]
    services:
      cidrBlocks: ["10.96.0.0/12"]
    serviceDomain: cluster.local
  controlPlaneEndpoint:
    host: full.example.com
    port: 6443
  controlPlaneRef:
    apiVersion: controlplane.cluster.x-k8s.io/v1beta1
    kind: KubeadmControlPlane
    name: full-control-plane
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: AzureCluster
    name: full
  availabilityGates:
  - conditionType: NetworkReady
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: full-topology
spec:
  topology:
    class: quick-start
    classNamespace: default
    version: v1.31.2
    controlPlane:
      replicas: 3
      metadata:
        labels: {tier: cp}
    workers:
      machinePools:
      - class: default-worker
        name: mp-0
        replicas: 2
    variables:
    - name: imageRepository
      value: registry.k8s.io
    - name: sizes
      value: {small: 1, tags: [a, b]}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata:
  name: full-mp-0
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "1"
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "10"
spec:
  clusterName: full
  replicas: 3
  minReadySeconds: 30
  failureDomains: ["1", "2", "3"]
  providerIDList:
  - azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/full-mp-0/virtualMachines/0
  template:
    metadata:
      labels: {pool: mp-0}
      annotations: {note: hello}
    spec:
      clusterName: full
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
          kind: KubeadmConfig
          name: full-mp-0
          namespace: ignored-by-test
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: AzureMachinePool
        name: full-mp-0
      version: v1.31.2
      failureDomain: "1"
      nodeDrainTimeout: 5m0s
      nodeVolumeDetachTimeout: 2m0s
      nodeDeletionTimeout: 10s
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: full-machine
spec:
  clusterName: full
  bootstrap:
    dataSecretName: full-bootstrap
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: AzureMachinePoolMachine
    name: full-mp-0-0
  version: v1.31.2
  providerID: azure:///vm/0
  failureDomain: "1"
  readinessGates:
  - conditionType: Ready
  nodeDrainTimeout: 1m0s
  nodeVolumeDetachTimeout: 1m0s
  nodeDeletionTimeout: 1m0s
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfig
metadata:
  name: full-mp-0
spec:
  clusterConfiguration:
    apiServer:
      extraArgs: {cloud-provider: external}
    controllerManager:
      extraArgs: {allocate-node-cidrs: "false"}
  initConfiguration:
    nodeRegistration:
      kubeletExtraArgs: {cloud-provider: external}
  joinConfiguration:
    apiVersion: kubeadm.k8s.io/v1beta3
    kind: JoinConfiguration
    caCertPath: /etc/kubernetes/pki/ca.crt
    skipPhases: [preflight]
    patches:
      directory: /etc/kubernetes/patches
    discovery:
      bootstrapToken:
        token: abcdef.0123456789abcdef
        apiServerEndpoint: full.example.com:6443
        caCertHashes: ["sha256:0123"]
        unsafeSkipCAVerification: false
      tlsBootstrapToken: abcdef.0123456789abcdef
      timeout: 5m0s
    nodeRegistration:
      name: '{{ ds.meta_data["local_hostname"] }}'
      criSocket: unix:///var/run/containerd/containerd.sock
      imagePullPolicy: IfNotPresent
      ignorePreflightErrors: [Swap]
      kubeletExtraArgs:
        cloud-provider: external
        azure-container-registry-config: /etc/kubernetes/azure.json
      taints:
      - key: dedicated
        value: gpu
        effect: NoSchedule
  files:
  - path: /etc/kubernetes/azure.json
    owner: root:root
    permissions: "0644"
    contentFrom:
      secret:
        name: full-mp-0-azure-json
        key: worker-node-azure.json
  - path: /etc/motd
    content: aGVsbG8=
    encoding: base64
    append: true
  preKubeadmCommands: ["echo pre"]
  postKubeadmCommands: ["echo post"]
  bootCommands: ["echo boot"]
  users:
  - name: capi
    gecos: CAPI user
    groups: docker
    homeDir: /home/capi
    inactive: false
    shell: /bin/bash
    primaryGroup: capi
    lockPassword: true
    sudo: ALL=(ALL) NOPASSWD:ALL
    sshAuthorizedKeys: ["ssh-ed25519 AAAA test"]
  - name: other
    passwdFrom:
      secret: {name: pw, key: hash}
  ntp:
    enabled: true
    servers: [time.example.com]
  format: cloud-config
  verbosity: 5
  useExperimentalRetryJoin: true
  diskSetup:
    partitions:
    - device: /dev/disk/azure/scsi1/lun0
      layout: true
      overwrite: false
      tableType: gpt
    filesystems:
    - device: /dev/disk/azure/scsi1/lun0
      filesystem: ext4
      label: etcd_disk
      partition: auto
      overwrite: false
      extraOpts: ["-E", "lazy_itable_init=1"]
  mounts:
  - [LABEL=etcd_disk, /var/lib/etcddisk]
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: full-md-0
spec:
  template:
    metadata:
      labels: {a: b}
    spec:
      joinConfiguration:
        discovery:
          file:
            kubeConfigPath: /etc/kubernetes/discovery.conf
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureMachinePool
metadata:
  name: full-mp-0
spec:
  location: westus2
  orchestrationMode: Flexible
  identity: UserAssigned
  userAssignedIdentities:
  - providerID: azure:///subscriptions/s/resourcegroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id
  systemAssignedIdentityRole:
    name: role
    scope: /subscriptions/s
    definitionID: /subscriptions/s/providers/Microsoft.Authorization/roleDefinitions/r
  additionalTags: {team: platform}
  nodeDrainTimeout: 10m0s
  platformFaultDomainCount: 2
  zoneBalance: true
  strategy:
    type: RollingUpdate
    rollingUpdate:
      deletePolicy: Newest
      maxSurge: 25%
      maxUnavailable: 1
  template:
    vmSize: Standard_D4s_v5
    sshPublicKey: c3No
    image:
      marketplace:
        publisher: cncf-upstream
        offer: capi
        sku: ubuntu-2204-gen1
        version: latest
        thirdPartyImage: false
    osDisk:
      osType: Linux
      diskSizeGB: 128
      cachingType: ReadOnly
      managedDisk:
        storageAccountType: Premium_LRS
        diskEncryptionSet: {id: des}
      diffDiskSettings:
        option: Local
        placement: ResourceDisk
    dataDisks:
    - nameSuffix: etcddisk
      diskSizeGB: 256
      lun: 0
      cachingType: None
      managedDisk: {storageAccountType: Standard_LRS}
    spotVMOptions:
      maxPrice: "0.5"
      evictionPolicy: Delete
    securityProfile:
      encryptionAtHost: true
      securityType: TrustedLaunch
      uefiSettings: {secureBootEnabled: true, vTpmEnabled: true}
    diagnostics:
      boot:
        storageAccountType: UserManaged
        userManaged: {storageAccountURI: "https://sa.blob.core.windows.net"}
    networkInterfaces:
    - subnetName: node-subnet
      privateIPConfigs: 1
      acceleratedNetworking: true
    terminateNotificationTimeout: 10
    vmExtensions:
    - name: ext
      publisher: pub
      version: "1.0"
      settings: {a: b}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AWSMachinePool
metadata:
  name: full-aws
spec:
  minSize: 1
  maxSize: 10
  availabilityZones: [us-east-1a]
  availabilityZoneSubnetType: private
  subnets:
  - subnet-1
  - id: subnet-2
  - filters:
    - name: tag:Name
      values: [private]
  additionalTags: {team: platform}
  capacityRebalance: true
  defaultCoolDown: 2m0s
  defaultInstanceWarmup: 1m0s
  refreshPreferences:
    disable: false
    strategy: Rolling
    instanceWarmup: 60
    minHealthyPercentage: 90
    maxHealthyPercentage: 110
  suspendProcesses:
    processes: {launch: true, azRebalance: true}
  mixedInstancesPolicy:
    instancesDistribution:
      onDemandAllocationStrategy: prioritized
      spotAllocationStrategy: price-capacity-optimized
      onDemandBaseCapacity: 1
      onDemandPercentageAboveBaseCapacity: 50
    overrides:
    - instanceType: m5.large
    - instanceType: m5a.large
  awsLaunchTemplate:
    name: full-aws
    iamInstanceProfile: nodes.cluster-api-provider-aws.sigs.k8s.io
    ami: {id: ami-0123}
    imageLookupFormat: capa-ami-{{.BaseOS}}-?{{.K8sVersion}}-*
    imageLookupOrg: "258751437250"
    imageLookupBaseOS: ubuntu-22.04
    instanceType: m5.large
    sshKeyName: default
    versionNumber: 3
    rootVolume: {size: 80, type: gp3, iops: 3000, throughput: 125, encrypted: true, encryptionKey: kms-key, deviceName: /dev/sda1}
    nonRootVolumes:
    - {size: 100, type: gp2, deviceName: /dev/sdb}
    additionalSecurityGroups:
    - id: sg-1
    spotMarketOptions: {maxPrice: "0.05"}
    instanceMetadataOptions: {httpEndpoint: enabled, httpPutResponseHopLimit: 2, httpTokens: required, instanceMetadataTags: enabled}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AWSManagedMachinePool
metadata:
  name: full-eks
spec:
  eksNodegroupName: full-ng
  availabilityZones: [us-east-1a]
  subnetIDs: [subnet-1]
  additionalTags: {team: platform}
  roleName: eks-nodes
  roleAdditionalPolicies: ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"]
  amiVersion: 1.29.0-20240213
  amiType: AL2023_x86_64_STANDARD
  labels: {pool: eks}
  taints:
  - {key: dedicated, value: gpu, effect: no-schedule}
  diskSize: 50
  instanceType: m5.large
  scaling: {minSize: 1, maxSize: 5}
  remoteAccess: {sshKeyName: default, sourceSecurityGroups: [sg-1], public: false}
  capacityType: spot
  updateConfig: {maxUnavailablePercentage: 25}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LocalMachinePool
metadata:
  name: full-local
spec:
  template:
    instanceType: small
    image: ubuntu-24.04
    zones: [zone-a, zone-b, zone-c]
  strategy:
    type: RollingUpdate
    rollingUpdate: {deletePolicy: Random, maxSurge: "50%", maxUnavailable: "25%"}
  simulation:
    bootDelay: 3s
    bootJitter: 1s
    failureRate: "0.05"
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureCluster
metadata:
  name: full
spec:
  subscriptionID: 11111111-1111-1111-1111-111111111111
  resourceGroup: full-rg
  location: westus2
  azureEnvironment: AzurePublicCloud
  additionalTags: {team: pools}
  identityRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: AzureClusterIdentity
    name: full-identity
    namespace: identities
  controlPlaneEndpoint: {host: full-api.westus2.cloudapp.azure.com, port: 6443}
  failureDomains:
    "1": {controlPlane: true}
    "2": {controlPlane: true}
  bastionSpec:
    azureBastion:
      name: full-bastion
      subnet: {name: AzureBastionSubnet, role: bastion, cidrBlocks: ["10.0.255.0/24"]}
  cloudProviderConfigOverrides:
    rateLimits:
    - name: defaultRateLimit
      config: {cloudProviderRateLimit: true, cloudProviderRateLimitQPS: 10}
  networkSpec:
    vnet:
      name: full-vnet
      resourceGroup: network-rg
      cidrBlocks: ["10.0.0.0/8", "2001:1234:5678:9a00::/56"]
      tags: {env: test}
      peerings:
      - resourceGroup: hub-rg
        remoteVnetName: hub-vnet
        forwardPeeringProperties: {allowForwardedTraffic: true}
    subnets:
    - name: control-plane-subnet
      role: control-plane
      cidrBlocks: ["10.0.0.0/16"]
      securityGroup:
        name: control-plane-nsg
        securityRules:
        - name: allow-apiserver
          protocol: Tcp
          direction: Inbound
          priority: 2201
          sourcePorts: "*"
          destinationPorts: "6443"
          source: "*"
          destination: "*"
          action: Allow
    - name: node-subnet
      role: node
      cidrBlocks: ["10.1.0.0/16"]
      routeTable: {name: node-routetable}
      natGateway: {name: node-natgateway, NatGatewayIP: {name: node-natgw-ip}}
      serviceEndpoints:
      - service: Microsoft.Storage
        locations: ["*"]
      privateEndpoints:
      - name: storage-pe
        privateLinkServiceConnections:
        - privateLinkServiceID: /subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/full-rg/providers/Microsoft.Storage/storageAccounts/fullsa
          groupIDs: [blob]
    apiServerLB:
      name: full-internal-lb
      type: Internal
      frontendIPs:
      - name: full-internal-lb-frontend
        privateIP: 10.0.0.100
    nodeOutboundLB: {frontendIPsCount: 1}
    controlPlaneOutboundLB: {frontendIPsCount: 1}
    privateDNSZoneName: full.capz.io
    privateDNSZoneResourceGroup: dns-rg
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureClusterIdentity
metadata:
  name: full-identity
  labels:
    clusterctl.cluster.x-k8s.io/move-hierarchy: "true"
spec:
  type: WorkloadIdentity
  clientID: 33333333-3333-3333-3333-333333333333
  tenantID: 22222222-2222-2222-2222-222222222222
  allowedNamespaces:
    list: [default, team-a]
    selector:
      matchLabels: {azure-identity: allowed}
`

// TestClusterAPIManifestRoundTrip applies a manifest using most Cluster API, CAPZ and CAPA
// fields (CAPZ's AzureCluster networking mpool keeps but does not read among them) and asserts nothing is dropped or changed.
func TestClusterAPIManifestRoundTrip(t *testing.T) {
	applyAndCompare(t, strings.TrimSpace(fullManifest))
}
