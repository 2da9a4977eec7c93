import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createPublicClient, http } from "viem";
import { describe, expect, it } from "vitest";
import { recoverStateFile, startAnvil } from "@/lib/chain/anvil";

const run = promisify(execFile);
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "anvil-state-"));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("the embedded chain's state file", () => {
  it("survives a server that exits while anvil is dumping it (Next.js exits on SIGINT before our shutdown ends)", async () => {
    const dir = tmp();
    const stateFile = path.join(dir, "anvil-31337.json");
    // A child process in the shape of the server: start anvil, make blocks, ask it to stop, exit at once.
    const script = path.join(dir, "server.mts");
    fs.writeFileSync(
      script,
      `import { startAnvil } from ${JSON.stringify(path.resolve("lib/chain/anvil.ts"))};
       const node = await startAnvil({ chainId: 31337, port: 0, stateFile: ${JSON.stringify(stateFile)}, blockTime: 0 });
       await fetch(node.rpcUrl, { method: "POST", headers: { "content-type": "application/json" },
         body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: ["0x64"] }) });
       console.log(node.pid);
       void node.stop();
       process.exit(0);`,
    );
    const { stdout } = await run(path.resolve("node_modules/.bin/tsx"), [script]);
    const pid = Number(stdout.trim().split("\n").pop());
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
    expect(() => JSON.parse(fs.readFileSync(stateFile, "utf8"))).not.toThrow();

    const node = await startAnvil({ chainId: 31337, port: 0, stateFile, blockTime: 0 });
    try {
      const client = createPublicClient({ transport: http(node.rpcUrl) });
      expect(await client.getBlockNumber()).toBeGreaterThanOrEqual(100n);
    } finally {
      await node.stop();
    }
  });

  it("a state file cut short is set aside and the copy from the last good start is used", () => {
    const dir = tmp();
    const stateFile = path.join(dir, "anvil-31337.json");
    expect(recoverStateFile(stateFile)).toBe("fresh");
    fs.writeFileSync(stateFile, JSON.stringify({ block: 7 }));
    expect(recoverStateFile(stateFile)).toBe("ok");
    expect(JSON.parse(fs.readFileSync(`${stateFile}.last-good`, "utf8"))).toEqual({ block: 7 });

    fs.writeFileSync(stateFile, ""); // what a dump killed half-way leaves
    expect(recoverStateFile(stateFile)).toBe("restored");
    expect(JSON.parse(fs.readFileSync(stateFile, "utf8"))).toEqual({ block: 7 });
    expect(fs.readdirSync(dir).filter((f) => f.includes(".damaged-"))).toHaveLength(1);

    fs.rmSync(`${stateFile}.last-good`);
    fs.writeFileSync(stateFile, '{"block":');
    expect(recoverStateFile(stateFile)).toBe("reset");
    expect(fs.existsSync(stateFile)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.includes(".damaged-"))).toHaveLength(2);
  });
});
