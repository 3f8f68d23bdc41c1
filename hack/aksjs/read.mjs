// read.mjs: an independent client of an AKS endpoint (the simulated AKS of
// mpool's simulated Azure, or ARM itself). With the Azure SDK for JS
// (@azure/arm-containerservice, @azure/identity: `npm ci` here first) it
// lists the agent pools of one AKS cluster and each pool's machines, and
// prints them as JSON on stdout.
//
// Environment: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET,
// AZURE_SUBSCRIPTION_ID, AZURE_RESOURCE_GROUP, AKS_CLUSTER; ARM_ENDPOINT
// (default https://management.azure.com) is both the ARM endpoint and the
// token audience, AZURE_AUTHORITY_HOST the Entra ID authority (default
// ARM_ENDPOINT); NODE_EXTRA_CA_CERTS names the CA of a simulated cloud.
import { ClientSecretCredential } from "@azure/identity";
import { ContainerServiceClient } from "@azure/arm-containerservice";

const env = (k, d) => {
  const v = process.env[k] ?? d;
  if (v === undefined) {
    throw new Error(`${k} is required`);
  }
  return v;
};

const endpoint = env("ARM_ENDPOINT", "https://management.azure.com");
const cred = new ClientSecretCredential(env("AZURE_TENANT_ID"), env("AZURE_CLIENT_ID"), env("AZURE_CLIENT_SECRET"), {
  authorityHost: env("AZURE_AUTHORITY_HOST", endpoint),
  disableInstanceDiscovery: true,
});
const client = new ContainerServiceClient(cred, env("AZURE_SUBSCRIPTION_ID"), {
  endpoint,
  credentials: { scopes: [`${endpoint}/.default`] },
  retryOptions: { maxRetries: 0 },
});
const rg = env("AZURE_RESOURCE_GROUP");
const cluster = env("AKS_CLUSTER");

const pools = [];
for await (const p of client.agentPools.list(rg, cluster)) {
  const machines = [];
  for await (const m of client.machines.list(rg, cluster, p.name)) {
    machines.push({ name: m.name, resourceId: m.properties?.resourceId });
  }
  pools.push({
    name: p.name,
    count: p.count ?? p.properties?.count,
    mode: p.mode ?? p.properties?.mode,
    vmSize: p.vmSize ?? p.properties?.vmSize,
    provisioningState: p.provisioningState ?? p.properties?.provisioningState,
    orchestratorVersion: p.orchestratorVersion ?? p.properties?.orchestratorVersion,
    currentOrchestratorVersion: p.currentOrchestratorVersion ?? p.properties?.currentOrchestratorVersion,
    machines,
  });
}
process.stdout.write(JSON.stringify({ pools }) + "\n");
