import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ApiError } from "@/lib/errors";
import { checkOutboundUrl, outboundFetch, OutboundRefusedError, type Lookup } from "@/lib/outbound";
import { addressRefusal } from "@/lib/outbound/address";

// No test here sends a packet to a non-loopback address: names resolve through stubs, and the
// one connection aimed at a public address is stopped inside net.Socket#connect.

/** A lookup answering from a list, one answer per call (the last repeats); records the calls. */
function stubLookup(...answers: string[][]): Lookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

const noLookup: Lookup = async (hostname) => {
  throw new Error(`unexpected DNS lookup of ${hostname}`);
};

async function refusal(url: string, opts: { livemode: boolean; lookup?: Lookup }) {
  const err = await checkOutboundUrl(url, { ...opts, field: "url" }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `${url} should be refused`).toBeInstanceOf(ApiError);
  const apiError = err as ApiError;
  expect(apiError.status).toBe(400);
  expect(apiError.details?.url).toMatchObject({ value: url });
  return apiError.details!.url!.message;
}

interface Server {
  server: http.Server;
  hits: { path: string; host?: string; body: string }[];
  port: number;
}

async function listen(host: string, port = 0, answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.writeHead(200).end("ok")): Promise<Server> {
  const hits: Server["hits"] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      hits.push({ path: req.url!, host: req.headers.host, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { server, hits, port: (server.address() as AddressInfo).port };
}

const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.server.close(r)))));
afterEach(() => vi.restoreAllMocks());

describe("address classification", () => {
  it("live mode allows only public unicast addresses, IPv4-mapped IPv6 judged as its IPv4", () => {
    const refused = [
      "127.0.0.1", "127.5.6.7", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "169.254.1.1",
      "100.64.0.1", "0.0.0.0", "0.1.2.3", "224.0.0.1", "255.255.255.255", "240.0.0.1", "192.0.2.1",
      "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "fd00:ec2::254",
      "64:ff9b::7f00:1", "2002:7f00:1::1",
    ];
    for (const address of refused) expect(addressRefusal(address, true), address).not.toBeNull();
    for (const address of ["93.184.215.14", "8.8.8.8", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) expect(addressRefusal(address, true), address).toBeNull();
  });

  it("test mode allows local addresses but never the cloud metadata endpoints", () => {
    for (const address of ["127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "8.8.8.8"]) expect(addressRefusal(address, false), address).toBeNull();
    for (const address of ["169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "169.254.170.2"]) {
      expect(addressRefusal(address, false), address).toMatch(/metadata/);
    }
  });
});

describe("checkOutboundUrl (set time)", () => {
  it("live mode refuses the issue's URLs and their https forms (odd IPv4 notations included) with a 400 naming the field", async () => {
    for (const url of ["http://127.0.0.1:5432/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://0x7f000001/"]) {
      expect(await refusal(url, { livemode: true, lookup: noLookup })).toMatch(/https/);
    }
    const https: [string, RegExp][] = [
      ["https://127.0.0.1:5432/", /127\.0\.0\.1 is a loopback address/],
      ["https://169.254.169.254/latest/meta-data/", /metadata/],
      ["https://[::1]/", /::1 is a loopback/],
      ["https://0x7f000001/", /127\.0\.0\.1 is a loopback/],
      ["https://2130706433/", /127\.0\.0\.1 is a loopback/],
      ["https://0177.0.0.1/", /127\.0\.0\.1 is a loopback/],
      ["https://[::ffff:7f00:1]/", /loopback/],
      ["https://10.1.2.3/", /private/],
      ["https://192.168.0.10/", /private/],
      ["https://100.64.0.1/", /CGNAT/],
      ["https://0.0.0.0/", /unspecified/],
      ["https://[fe80::1]/", /link-local/],
      ["https://[fd00:ec2::254]/", /metadata/],
      ["https://localhost:3000/", /loopback name/],
      ["https://hooks.localhost/", /loopback name/],
    ];
    for (const [url, reason] of https) expect(await refusal(url, { livemode: true, lookup: noLookup }), url).toMatch(reason);
  });

  it("live mode resolves the name and refuses it when any address is not public", async () => {
    expect(await refusal("https://internal.example.com/hook", { livemode: true, lookup: stubLookup(["10.0.0.7"]) })).toMatch(/internal\.example\.com resolves to 10\.0\.0\.7, a private address/);
    expect(await refusal("https://mixed.example.com/hook", { livemode: true, lookup: stubLookup(["93.184.215.14", "127.0.0.1"]) })).toMatch(/resolves to 127\.0\.0\.1/);
    expect(await refusal("https://nowhere.example.com/", { livemode: true, lookup: () => Promise.reject(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" })) })).toMatch(/does not resolve \(ENOTFOUND\)/);
    expect(await refusal("https://user:pw@example.com/", { livemode: true, lookup: noLookup })).toMatch(/credentials/);
    const lookup = stubLookup(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
    await expect(checkOutboundUrl("https://hooks.example.com/in?token=x", { livemode: true, lookup })).resolves.toBeInstanceOf(URL);
    expect(lookup.calls).toEqual(["hooks.example.com"]);
  });

  it("test mode accepts http and local addresses (local development), but not the metadata endpoint; it resolves no name at set time", async () => {
    for (const url of ["http://127.0.0.1:5432/", "http://[::1]/", "http://0x7f000001/", "http://localhost:3000/hooks", "https://example.com/a"]) {
      await expect(checkOutboundUrl(url, { livemode: false, lookup: noLookup }), url).resolves.toBeInstanceOf(URL);
    }
    expect(await refusal("http://169.254.169.254/latest/meta-data/", { livemode: false, lookup: noLookup })).toMatch(/metadata/);
    expect(await refusal("http://[::ffff:a9fe:a9fe]/", { livemode: false, lookup: noLookup })).toMatch(/metadata/);
    expect(await refusal("ftp://example.com/", { livemode: false, lookup: noLookup })).toMatch(/http\(s\)/);
  });
});

describe("outboundFetch (delivery)", () => {
  let local: Server;
  beforeAll(async () => {
    local = await listen("127.0.0.1", 0, (req, res) => {
      if (req.url === "/redirect") res.writeHead(302, { location: `http://127.0.0.1:${local.port}/elsewhere` }).end();
      else res.writeHead(201, { "x-answer": "yes" }).end(`got ${req.url}`);
    });
    servers.push(local);
  });

  it("test mode posts to a local server and answers a fetch Response; redirects are not followed", async () => {
    const res = await outboundFetch(`http://localhost:${local.port}/hooks?x=1`, { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" }, { livemode: false });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-answer")).toBe("yes");
    expect(await res.text()).toBe("got /hooks?x=1");
    expect(local.hits.at(-1)).toEqual({ path: "/hooks?x=1", host: `localhost:${local.port}`, body: "hello" });

    const before = local.hits.length;
    const redirected = await outboundFetch(`http://127.0.0.1:${local.port}/redirect`, { method: "POST", body: "x" }, { livemode: false });
    expect(redirected.status).toBe(302);
    expect(local.hits.slice(before).map((h) => h.path)).toEqual(["/redirect"]);
  });

  it("live mode refuses after resolving, before any connection", async () => {
    const before = local.hits.length;
    await expect(outboundFetch(`https://rebind.example.com:${local.port}/`, { method: "POST" }, { livemode: true, lookup: stubLookup(["127.0.0.1"]) })).rejects.toThrow(OutboundRefusedError);
    await expect(outboundFetch(`http://127.0.0.1:${local.port}/`, { method: "POST" }, { livemode: true })).rejects.toThrow(/https/);
    await expect(outboundFetch(`http://169.254.169.254/latest/meta-data/`, {}, { livemode: false })).rejects.toThrow(/metadata/);
    expect(local.hits.length).toBe(before);
  });

  it("connects to the address that was checked, never resolving again (DNS rebinding): two loopback servers on one port", async () => {
    const first = await listen("127.0.0.1");
    const second = await listen("127.0.0.2", first.port);
    servers.push(first, second);
    const lookup = stubLookup(["127.0.0.1"], ["127.0.0.2"]);
    const res = await outboundFetch(`http://rebind.test:${first.port}/hook`, { method: "POST", body: "x" }, { livemode: false, lookup });
    expect(res.status).toBe(200);
    expect(lookup.calls).toEqual(["rebind.test"]);
    expect(first.hits).toEqual([{ path: "/hook", host: `rebind.test:${first.port}`, body: "x" }]);
    expect(second.hits).toEqual([]);
  });

  it("live mode: a name that answers a public address at check time and 127.0.0.1 afterwards never reaches the local server", async () => {
    const targets: unknown[] = [];
    // Stops every outgoing connection before it is made, recording where it was aimed.
    vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      const options = (Array.isArray(args[0]) ? args[0][0] : args[0]) as { host?: string; port?: number };
      targets.push({ host: options.host, port: Number(options.port) });
      process.nextTick(() => this.destroy(new Error("connection stopped by the test")));
      return this;
    } as never);
    const before = local.hits.length;
    const lookup = stubLookup(["93.184.215.14"], ["127.0.0.1"]);
    await expect(outboundFetch(`https://rebind.example.com:${local.port}/hook`, { method: "POST", body: "x" }, { livemode: true, lookup })).rejects.toThrow(/stopped by the test/);
    expect(lookup.calls).toEqual(["rebind.example.com"]);
    expect(targets).toEqual([{ host: "93.184.215.14", port: local.port }]);
    expect(local.hits.length).toBe(before);
  });

  it("a timeout aborts with the signal's reason", async () => {
    const slow = await listen("127.0.0.1", 0, () => {});
    servers.push(slow);
    const err = await outboundFetch(`http://127.0.0.1:${slow.port}/`, { method: "POST", signal: AbortSignal.timeout(200) }, { livemode: false }).catch((e: Error) => e);
    expect((err as Error).name).toBe("TimeoutError");
  });
});

describe("always refused: metadata endpoints and the unspecified address, in every embedding", () => {
  it("refuses them with private targets allowed too (test mode on a loopback-only server)", () => {
    const always = [
      "169.254.169.254", "169.254.170.2", "100.100.100.200", "168.63.129.16", "fd00:ec2::254", "0.0.0.0", "0.1.2.3", "::",
      // IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64 (RFC 6052) and 6to4 forms of them.
      "::ffff:169.254.169.254", "::a9fe:a9fe", "::ffff:0:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "64:ff9b::a83f:8110", "2002:a9fe:a9fe::1", "::ffff:168.63.129.16", "::ffff:0.0.0.0", "64:ff9b::",
    ];
    for (const address of always) {
      expect(addressRefusal(address, false), address).not.toBeNull();
      expect(addressRefusal(address, true), address).not.toBeNull();
    }
    for (const address of ["169.254.169.254", "::a9fe:a9fe", "64:ff9b::a9fe:a9fe", "168.63.129.16", "2002:a9fe:a9fe::1"]) expect(addressRefusal(address, false), address).toMatch(/metadata/);
    // Neighbours of them are ordinary local or public addresses.
    for (const address of ["169.254.169.253", "168.63.129.17", "::1", "64:ff9b::808:808", "127.0.0.1"]) expect(addressRefusal(address, false), address).toBeNull();
  });

  it("a URL naming one is refused at set time and at call time, without connecting", async () => {
    for (const url of ["http://[::a9fe:a9fe]/latest/", "http://[64:ff9b::a9fe:a9fe]/", "http://0.0.0.0:3000/", "http://168.63.129.16/machine", "http://0/", "http://[::]:3000/"]) {
      expect(await refusal(url, { livemode: false, lookup: noLookup }), url).toMatch(/metadata|unspecified/);
      await expect(outboundFetch(url, {}, { livemode: false, lookup: noLookup }), url).rejects.toThrow(OutboundRefusedError);
    }
    // A name is judged by what it resolves to, when called.
    await expect(outboundFetch("http://metadata.example/", {}, { livemode: false, lookup: stubLookup(["64:ff9b::a9fe:a9fe"]) })).rejects.toThrow(/metadata/);
  });
});

describe("URL normalisation: CR/LF, control characters and empty userinfo", () => {
  it("refuses a URL with CR, LF, tab or another control character anywhere, and any userinfo, empty too", async () => {
    for (const url of ["http://127.0.0.1/a\r\nb", "http://127.0.0.1/\n", "http://127.0.0.1/a\tb", "http://exa\r\nmple.com/", "http://127.0.0.1/a\u0000b", "http://127.0.0.1/a b"]) {
      expect(await refusal(url, { livemode: false, lookup: noLookup }), JSON.stringify(url)).toMatch(/control characters|spaces/);
      await expect(outboundFetch(url, {}, { livemode: false, lookup: noLookup }), JSON.stringify(url)).rejects.toThrow(OutboundRefusedError);
    }
    for (const url of ["https://@example.com/", "https://:@example.com/", "http://@127.0.0.1:1/", "https://user@example.com/", "https:\\\\@example.com/"]) {
      expect(await refusal(url, { livemode: false, lookup: noLookup }), url).toMatch(/credentials/);
    }
    // An @ after the host is part of the path or query, not userinfo.
    await expect(checkOutboundUrl("http://127.0.0.1:1/a@b?c=@d", { livemode: false, lookup: noLookup })).resolves.toBeInstanceOf(URL);
  });

  it("answers the normalised URL (lower-case scheme and host, default port dropped, dot segments resolved)", async () => {
    const url = await checkOutboundUrl("HTTP://LocalHost:80/a/../hook?x=1", { livemode: false, lookup: noLookup });
    expect(url.href).toBe("http://localhost/hook?x=1");
  });
});

describe("private targets only where the operator allows them (test mode)", () => {
  let local: Server;
  let connections = 0;
  beforeAll(async () => {
    local = await listen("127.0.0.1");
    local.server.on("connection", () => connections++);
    servers.push(local);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const onPublicHost = () => {
    vi.stubEnv("HOST", "0.0.0.0");
    vi.stubEnv("OUTBOUND_ALLOW_PRIVATE", "");
  };

  it("a server bound beyond loopback refuses loopback, private and localhost targets at set time and at call time, never connecting", async () => {
    onPublicHost();
    const before = connections;
    for (const url of [`http://127.0.0.1:${local.port}/hook`, `http://[::1]:${local.port}/`, `http://localhost:${local.port}/`, `http://10.0.0.7/`, `http://192.168.1.1:8080/`, `http://[::ffff:127.0.0.1]:${local.port}/`, `http://[64:ff9b::7f00:1]:${local.port}/`]) {
      expect(await refusal(url, { livemode: false, lookup: noLookup }), url).toMatch(/loopback|private|reserved|NAT64|address/);
      await expect(outboundFetch(url, { method: "POST", body: "x" }, { livemode: false, lookup: noLookup }), url).rejects.toThrow(OutboundRefusedError);
    }
    // A name resolving to loopback: refused after resolving, before connecting.
    await expect(outboundFetch(`http://rebind.test:${local.port}/`, { method: "POST" }, { livemode: false, lookup: stubLookup(["127.0.0.1"]) })).rejects.toThrow(/rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(await refusal(`http://internal.test:${local.port}/`, { livemode: false, lookup: stubLookup(["10.1.2.3"]) })).toMatch(/resolves to 10\.1\.2\.3, a private address/);
    expect(await refusal(`http://127.0.0.1:${local.port}/`, { livemode: false, lookup: noLookup })).toMatch(/OUTBOUND_ALLOW_PRIVATE=true/);
    expect(await refusal("http://169.254.169.254/", { livemode: false, lookup: noLookup })).not.toMatch(/OUTBOUND_ALLOW_PRIVATE/);
    await new Promise((r) => setTimeout(r, 50));
    expect(connections).toBe(before);
  });

  it("test mode still allows http to a public address there (stopped before it leaves the machine)", async () => {
    onPublicHost();
    const targets: unknown[] = [];
    vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      const options = (Array.isArray(args[0]) ? args[0][0] : args[0]) as { host?: string; port?: number };
      targets.push(options.host);
      process.nextTick(() => this.destroy(new Error("connection stopped by the test")));
      return this;
    } as never);
    await expect(checkOutboundUrl("http://hooks.example.com/in", { livemode: false, lookup: stubLookup(["93.184.215.14"]) })).resolves.toBeInstanceOf(URL);
    await expect(outboundFetch("http://hooks.example.com/in", { method: "POST" }, { livemode: false, lookup: stubLookup(["93.184.215.14"]) })).rejects.toThrow(/stopped by the test/);
    expect(targets).toEqual(["93.184.215.14"]);
  });

  it("OUTBOUND_ALLOW_PRIVATE=true allows them there; =false refuses them on a loopback-only server too", async () => {
    onPublicHost();
    vi.stubEnv("OUTBOUND_ALLOW_PRIVATE", "true");
    expect((await outboundFetch(`http://127.0.0.1:${local.port}/allowed`, { method: "POST" }, { livemode: false })).status).toBe(200);
    // Live mode is never widened by it.
    await expect(outboundFetch(`https://127.0.0.1:${local.port}/`, { method: "POST" }, { livemode: true })).rejects.toThrow(/loopback/);

    vi.stubEnv("HOST", "127.0.0.1");
    vi.stubEnv("OUTBOUND_ALLOW_PRIVATE", "false");
    const before = connections;
    await expect(outboundFetch(`http://127.0.0.1:${local.port}/`, { method: "POST" }, { livemode: false })).rejects.toThrow(OutboundRefusedError);
    expect(connections).toBe(before);
  });

  it("loopback-only means HOST is a loopback address or localhost (unset: 127.0.0.1, as npm start and npm run dev bind)", async () => {
    vi.stubEnv("OUTBOUND_ALLOW_PRIVATE", "");
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", ""]) {
      vi.stubEnv("HOST", host);
      expect((await outboundFetch(`http://127.0.0.1:${local.port}/dev`, { method: "POST" }, { livemode: false })).status, host).toBe(200);
    }
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "game.example.com", "[::]"]) {
      vi.stubEnv("HOST", host);
      await expect(outboundFetch(`http://127.0.0.1:${local.port}/`, { method: "POST" }, { livemode: false }), host).rejects.toThrow(OutboundRefusedError);
    }
  });
});
