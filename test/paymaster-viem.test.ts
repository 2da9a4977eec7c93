import { http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, createPaymasterClient } from "viem/account-abstraction";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { startAlto, type AltoBundler } from "./helpers/alto";
import { call } from "./helpers/api";
import { chainOf } from "./helpers/chain";
import { newProject } from "./helpers/api";
import { routeServer } from "./helpers/sdk-server";
import { viemSmartAccount } from "./helpers/viem-account";

/**
 * viem's own clients against our ERC-7677 service: a bundler client (a real bundler, alto) with our paymaster client
 * estimates, gets the sponsorship and lands an operation of the project's account. The service's bounds must leave
 * such standard clients working: their gas comes from the bundler's estimate, their fees from viem's.
 */
let alto: AltoBundler;
let server: Awaited<ReturnType<typeof routeServer>>;
let project: ProjectWithKeys;
const chain = () => chainOf(31337);

beforeAll(async () => {
  project = await newProject("viem paymaster client");
  server = await routeServer();
  alto = await startAlto({ rpcUrl: chain().rpcUrl, entryPoint: serviceDeployment().entryPoint });
}, 120_000);
afterAll(async () => {
  await alto?.stop();
  await server?.close();
});
beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.log(`alto's output:\n${alto.output().slice(-6_000)}`));
});

describe("viem's bundler and paymaster clients with our ERC-7677 service", () => {
  it("sponsor and land an operation of the project's account, within the service's bounds", async () => {
    const policy = await call("POST", "/v1/policies", { key: project.keys.test.secret, json: { name: "viem", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
    await call("POST", "/v1/policy_rules", { key: project.keys.test.secret, json: { policy: policy.body.id, type: "contract_functions", wildcard: true, functionName: "All functions" } });
    const account = await viemSmartAccount(project.keys.test.secret);
    const bundler = createBundlerClient({
      account,
      client: account.client,
      transport: http(alto.url),
      paymaster: createPaymasterClient({ transport: http(`${server.url}/v1/paymaster_service/${project.keys.test.publishable}`) }),
      paymasterContext: { policy: policy.body.id },
    });
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hash = (await bundler.sendUserOperation({ calls: [{ to, value: 0n, data: "0x" as Hex }] })) as Hex;
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000 });
    expect(receipt).toMatchObject({ success: true, paymaster: serviceDeployment().paymaster });
  }, 120_000);
});
