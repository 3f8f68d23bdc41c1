package provider

import (
	"context"
	"testing"

	"github.com/spf13/pflag"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

// TestEveryProviderKeepsTheContract runs the contract suites on every
// registry entry: a provider is done when they pass.
func TestEveryProviderKeepsTheContract(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		t.Run(p.Name, func(t *testing.T) {
			if p.Name != p.Adapter.Kinds().Provider {
				t.Errorf("registry name %q, the adapter's provider %q", p.Name, p.Adapter.Kinds().Provider)
			}
			if seen[p.Adapter.Kinds().Pool] {
				t.Errorf("two providers serve %s", p.Adapter.Kinds().Pool)
			}
			seen[p.Adapter.Kinds().Pool] = true
			contracttest.Adapter(t, p.Adapter)
		})
	}
}

// TestConfigsKeepTheDocumentedFlags: the providers' flags are their own
// now, under the names README and docs give users.
func TestConfigsKeepTheDocumentedFlags(t *testing.T) {
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	NewConfigs().AddFlags(fs)
	for _, name := range []string{
		"local-cloud-url",
		"azure-disabled", "azure-resource-manager-endpoint", "azure-authority-host", "azure-ca-file", "azure-tenant-id", "azure-client-id",
		"aws-disabled", "aws-endpoint", "aws-region", "aws-identity-namespace",
		"eks-endpoint",
	} {
		if fs.Lookup(name) == nil {
			t.Errorf("no flag --%s", name)
		}
	}
}

// TestSimulatedCloudTurnsOffWhatItDoesNotServe: a provider whose face the
// simulated cloud does not serve is not started (EKS goes with AWS), and
// NewConfigs keeps only the providers it names.
func TestSimulatedCloudTurnsOffWhatItDoesNotServe(t *testing.T) {
	faces := map[string]string{local.ProviderName: "http://127.0.0.1:1"}
	cfgs := NewConfigs().ForSimulatedCloud(kit.Simulated{FaceURL: func(f string) string { return faces[f] }})
	for _, p := range All() {
		sg, err := cfgs[p.Name].ScaleGroup(context.Background(), kit.Env{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if on := sg != nil; on != (p.Name == local.ProviderName) {
			t.Errorf("%s: started %v, want only the local provider", p.Name, on)
		}
	}
	if got := NewConfigs(aws.ProviderName, eks.ProviderName); len(got) != 2 || got[eks.ProviderName].(*eks.Config).AWS != got[aws.ProviderName] {
		t.Errorf("NewConfigs(aws, eks) = %v, want both, EKS sharing AWS's configuration", got)
	}
}

// TestTagsMatchTheSimulatedCloud: the simulated cloud's faces read the
// tags the providers write, and providers do not import the simulator, so
// this test keeps them equal.
func TestTagsMatchTheSimulatedCloud(t *testing.T) {
	for _, tc := range []struct{ name, provider, face string }{
		{name: "AWS model hash", provider: aws.TagModelHash, face: awsface.AWSTagModelHash},
		{name: "AWS Kubernetes version", provider: aws.TagKubernetesVersion, face: awsface.AWSTagKubernetesVersion},
		{name: "Azure model hash", provider: azure.TagModelHash, face: azureface.AzureTagModelHash},
		{name: "Azure Kubernetes version", provider: azure.TagKubernetesVersion, face: azureface.AzureTagKubernetesVersion},
	} {
		if tc.provider != tc.face {
			t.Errorf("%s: the provider writes tag %q, the face reads %q", tc.name, tc.provider, tc.face)
		}
	}
}
