package aws

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// nodeName is AWS's private DNS name in us-east-1.
var nodeName = regexp.MustCompile(`^ip-10-0-\d{1,3}-\d{1,3}\.ec2\.internal$`)

// TestSeedMachinePool: seed 004's example, applied unchanged, becomes a
// Running pool of Auto Scaling Group instances launched from a launch
// template, joined as Nodes with AWS's providerIDs and private DNS names;
// it scales 2→4→1; an instance type change and a version change each roll
// every instance within the budgets (one launch template version each);
// deleting one AWSMachinePoolMachine replaces that instance; deleting the
// pool leaves nothing behind.
func TestSeedMachinePool(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	for _, n := range f.PoolNodes() {
		if !strings.HasPrefix(n.Spec.ProviderID, "aws:///us-east-1a/i-") {
			t.Errorf("Node %s has providerID %s, want aws:///us-east-1a/i-...", n.Name, n.Spec.ProviderID)
		}
		if !nodeName.MatchString(n.Name) {
			t.Errorf("Node name %s is not AWS's private DNS name", n.Name)
		}
	}
	if v := f.launchTemplateVersions(t); v != 1 {
		t.Errorf("the launch template has %d versions after the create, want 1", v)
	}
	f.waitLaunchTemplateStatus()
	f.checkOwnerVersion(t)

	t.Log("an additional tag removed from the pool leaves the ASG")
	f.checkAdditionalTagRemoval()

	t.Log("scale 2 → 4 → 1")
	f.Scale(4)
	f.waitConverged(4, seedVersion)
	f.Scale(1)
	f.waitConverged(1, seedVersion)
	f.Scale(3)
	f.waitConverged(3, seedVersion)

	t.Log("instance type change rolls every instance")
	before := f.InstanceIDs()
	versions := f.launchTemplateVersions(t)
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.AWSLaunchTemplate.InstanceType = "m5.xlarge" })
	f.waitRolled(before, 3, seedVersion)
	if v := f.launchTemplateVersions(t); v != versions+1 {
		t.Errorf("an instance type change made %d launch template versions, want 1", v-versions)
	}
	f.waitLaunchTemplateStatus()

	t.Log("version change rolls every instance")
	before = f.InstanceIDs()
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = "v1.17.3" })
	f.waitRolled(before, 3, "v1.17.3")

	t.Log("deleting one AWSMachinePoolMachine replaces that instance only")
	f.DeleteOneMachine(3, "v1.17.3", converge)

	t.Log("deleting the pool leaves nothing behind")
	f.deletePoolAndWaitGone()
}

// checkOwnerVersion: the AWSMachinePoolMachines name their pool at the
// version the garbage collector watches AWSMachinePools at (discovery's
// preferred one: CAPA's v1beta2). A reference to mpool's v1beta1 is as
// valid, but the collector cannot tell from its graph and checks each such
// object with two GETs.
func (f *fixture) checkOwnerVersion(t *testing.T) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatal(err)
	}
	preferred := ""
	for _, l := range lists {
		for _, r := range l.APIResources {
			if r.Name == "awsmachinepools" && strings.HasPrefix(l.GroupVersion, infrav1.GroupVersion.Group+"/") {
				preferred = l.GroupVersion
			}
		}
	}
	if want := infrav1.GroupVersion.Group + "/v1beta2"; preferred != want {
		t.Fatalf("discovery prefers AWSMachinePools at %q, want %q (CAPA's version)", preferred, want)
	}
	machines := &infrav1.AWSMachinePoolMachineList{}
	if err := env.Client.List(f.Ctx, machines, client.InNamespace(f.NS)); err != nil {
		t.Fatal(err)
	}
	if len(machines.Items) == 0 {
		t.Fatal("no AWSMachinePoolMachines")
	}
	for _, m := range machines.Items {
		for _, ref := range m.OwnerReferences {
			if ref.Kind == "AWSMachinePool" && ref.APIVersion != preferred {
				t.Errorf("AWSMachinePoolMachine %s names its pool at %s, want %s", m.Name, ref.APIVersion, preferred)
			}
		}
	}
}
