import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { PASSWORD_RULE } from "@/lib/iam/credentials/schema";
import { verifyPassword } from "@/lib/keys/password";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { address, from, logIn, newEmail, PASSWORD, signedUp, signUp, withinOneMinuteWindow } from "./helpers/credentials-fixtures";

// Every password check the server makes (the routes run in this process), so a test can count the scrypt hashes a
// request computed rather than time it.
vi.mock("@/lib/keys/password", async (importOriginal) => {
  const real = await importOriginal<typeof import("@/lib/keys/password")>();
  return { ...real, verifyPassword: vi.fn(real.verifyPassword) };
});
const verify = vi.mocked(verifyPassword);
/** The cost parameters (`scrypt$N$r$p`) of each hash the server checked a password against since the last call. */
const hashesChecked = () => {
  const costs = verify.mock.calls.map(([, stored]) => stored.split("$").slice(0, 4).join("$"));
  verify.mockClear();
  return costs;
};

let project: ProjectWithKeys;
let pk: string;
let sk: string;
beforeAll(async () => {
  project = await newProject("credentials");
  pk = project.keys.test.publishable;
  sk = project.keys.test.secret;
});
afterEach(() => vi.unstubAllEnvs());

describe("sign-up", () => {
  it.each(["json", "form"] as const)("signs a player up (%s) and answers the authenticated player with its tokens", async (encoding) => {
    const email = newEmail();
    const res = await signUp(pk, { email, name: "Ada Lovelace", description: "first player" }, encoding);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      player: {
        id: expect.stringMatching(/^pla_/),
        object: "player",
        createdAt: expect.any(Number),
        name: "Ada Lovelace",
        email,
        linkedAccounts: [{ provider: "email", email, externalUserId: email.toLowerCase(), disabled: false, verified: false, updatedAt: expect.any(Number) }],
      },
      token: expect.stringMatching(/^ey/),
      refreshToken: expect.stringMatching(/^pss_/),
    });
    // The core API sees the same player, with the name, email and description given.
    const core = await call("GET", `/v1/players/${res.body.player.id}`, { key: sk });
    expect(core.body).toMatchObject({ name: "Ada Lovelace", email, description: "first player", livemode: false });
    // The token is a session of this player in this project and test mode.
    const verified = await call("GET", "/iam/v1/verify", { key: sk, query: { token: res.body.token } });
    expect(verified.body).toMatchObject({ projectId: project.id, playerId: res.body.player.id, livemode: false });
  });

  it("also takes a secret key, and refuses a request with no key", async () => {
    expect((await signUp(sk)).status).toBe(200);
    const res = await call("POST", "/iam/v1/auth/signup", { headers: from(), json: { email: newEmail(), password: PASSWORD, name: "x" } });
    expectError(res, 401, "authentication_error");
  });

  it("keeps emails unique per project and mode, whatever their case, without telling more", async () => {
    const { email, playerId } = await signedUp(pk);
    for (const again of [email, email.toUpperCase()]) {
      const error = expectError(await signUp(pk, { email: again }), 409);
      expect(error.message).toMatch(/already used/);
      expect(JSON.stringify(error)).not.toContain(playerId);
    }
    // The other mode and another project are other namespaces.
    expect((await signUp(project.keys.live.publishable, { email })).status).toBe(200);
    expect((await signUp((await newProject("other")).keys.test.publishable, { email })).status).toBe(200);
  });

  it("makes one player of concurrent sign-ups with one email", async () => {
    const email = newEmail();
    const answers = await Promise.all([1, 2, 3].map(() => signUp(pk, { email })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const listed = await call("GET", "/v1/players", { key: sk, query: { email, limit: 10 } });
    expect(listed.body.total).toBe(1);
  });
});

describe("bad input (every parameter, both encodings)", () => {
  const valid = () => ({ email: newEmail(), password: PASSWORD, name: "Ada" });
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["no email", { email: undefined }, "email", /Missing required parameter/],
    ["no password", { password: undefined }, "password", /Missing required parameter/],
    ["no name", { name: undefined }, "name", /Missing required parameter/],
    ["an empty name", { name: "" }, "name", /./],
    ["a bad email", { email: "not-an-email" }, "email", /email/i],
    ["a long description", { description: "d".repeat(1001) }, "description", /./],
    ["an unknown parameter", { role: "admin" }, "role", /Unknown parameter/],
  ];
  for (const encoding of ["json", "form"] as const) {
    it.each(cases)(`sign-up with %s is a 400 naming it (${encoding})`, async (_what, change, param, message) => {
      const body = Object.fromEntries(Object.entries({ ...valid(), ...change }).filter(([, v]) => v !== undefined));
      const res = await call("POST", "/iam/v1/auth/signup", { key: pk, basic: true, headers: from(), ...(encoding === "json" ? { json: body } : { form: body }) });
      const error = expectError(res, 400, "invalid_request_error");
      expect(error.details?.[param]?.message).toMatch(message);
    });

    it(`states the password rule and never echoes a password (${encoding})`, async () => {
      for (const password of ["short12", "p".repeat(129), "😀".repeat(4)]) {
        const body = { ...valid(), password };
        const res = await call("POST", "/iam/v1/auth/signup", { key: pk, basic: true, headers: from(), ...(encoding === "json" ? { json: body } : { form: body }) });
        const error = expectError(res, 400);
        expect(error.details).toEqual({ password: { message: PASSWORD_RULE } });
        expect(error.message).toContain("8 to 128 characters");
        expect(JSON.stringify(res.body)).not.toContain(password.slice(0, 7));
      }
      // Characters are counted, not UTF-16 units: 8 emoji make a valid password.
      expect((await signUp(pk, { password: "😀".repeat(8) }, encoding)).status).toBe(200);
    });

    it(`login with a missing or bad parameter is a 400 (${encoding})`, async () => {
      for (const [body, param] of [[{ password: PASSWORD }, "email"], [{ email: newEmail() }, "password"], [{ email: "x", password: PASSWORD }, "email"], [{ email: newEmail(), password: PASSWORD, extra: 1 }, "extra"]] as const) {
        const res = await call("POST", "/iam/v1/auth/login", { key: pk, basic: true, headers: from(), ...(encoding === "json" ? { json: body } : { form: body }) });
        expect(expectError(res, 400).details).toHaveProperty(param);
      }
    });
  }
});

describe("login", () => {
  it.each(["/iam/v1/auth/login", "/iam/v1/password/login"])("logs in at %s, with the email in any case, into a new session", async (path) => {
    const { email, playerId, token } = await signedUp(pk);
    const res = await logIn(pk, email.toUpperCase(), PASSWORD, address(), path);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.player).toMatchObject({ id: playerId, linkedAccounts: [{ provider: "email" }] });
    const [first, second] = await Promise.all([token, res.body.token].map((t) => call("GET", "/iam/v1/verify", { key: sk, query: { token: t } })));
    expect(second!.body.sessionId).not.toBe(first!.body.sessionId);
    // Form-encoded too.
    const form = await call("POST", path, { key: pk, basic: true, headers: from(), form: { email, password: PASSWORD } });
    expect(form.body.player.id).toBe(playerId);
  });

  it("gives the same answer, after the same hashing, for an unknown email and a wrong password", async () => {
    const { email } = await signedUp(pk);
    hashesChecked();
    const wrong = await logIn(pk, email, "wrong password!");
    const wrongHashes = hashesChecked();
    const unknown = await logIn(pk, newEmail("nobody"), "wrong password!");
    const unknownHashes = hashesChecked();
    expect(wrong.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.body.error).toEqual({ type: "authentication_error", message: "Invalid email or password." });
    // An unknown email is checked against a decoy hash of the same cost: without it, it would skip the hash and answer
    // in a fraction of the time.
    expect(wrongHashes).toEqual(["scrypt$32768$8$1"]);
    expect(unknownHashes).toEqual(wrongHashes);
  });

  it("locks an email for 15 minutes after 10 wrong passwords, before hashing, and the right password then waits too", async () => {
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "0"); // the per-address limit is tested below; here every guess comes from one address
    const { email } = await signedUp(pk);
    const { email: neighbour } = await signedUp(pk);
    hashesChecked();
    for (let i = 0; i < 10; i++) expectError(await logIn(pk, email, `wrong-${i}-password`), 401);
    expect(hashesChecked()).toHaveLength(10); // each wrong password costs a hash…
    const locked = await logIn(pk, email, PASSWORD);
    expect(expectError(locked, 429, "rate_limit_error").message).toMatch(/locked/);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(890);
    expect(Number(locked.headers.get("retry-after"))).toBeLessThanOrEqual(900);
    // …and the locked email is refused before any hash is computed.
    expect(hashesChecked()).toEqual([]);
    // Another email of the project is not locked, nor is this one in the other mode.
    expect((await logIn(pk, neighbour)).status).toBe(200);
    expect(expectError(await logIn(project.keys.live.publishable, email), 401).message).toBe("Invalid email or password.");

    // An email no one signed up with locks the same way: the lock tells nothing about accounts.
    const nobody = newEmail("nobody");
    for (let i = 0; i < 10; i++) expectError(await logIn(pk, nobody, "wrong password"), 401);
    expectError(await logIn(pk, nobody, "wrong password"), 429);
  });

  it("a successful login starts the count again", async () => {
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "0");
    const { email } = await signedUp(pk);
    for (let i = 0; i < 9; i++) expectError(await logIn(pk, email, "wrong password"), 401);
    expect((await logIn(pk, email)).status).toBe(200);
    for (let i = 0; i < 9; i++) expectError(await logIn(pk, email, "wrong password"), 401);
    expect((await logIn(pk, email)).status).toBe(200);
  });

  it("limits sign-in and sign-up attempts per client address, before hashing", async () => {
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "3");
    await withinOneMinuteWindow();
    const { email } = await signedUp(pk);
    const ip = address();
    expect((await logIn(pk, email, PASSWORD, ip)).status).toBe(200);
    expect((await logIn(pk, email, "wrong password", ip)).status).toBe(401);
    const signup = await call("POST", "/iam/v1/password/signup", { key: pk, basic: true, headers: from(ip), json: { email: newEmail(), password: PASSWORD, name: "x" } });
    expect(signup.status).toBe(200);
    for (const attempt of [() => logIn(pk, email, PASSWORD, ip), () => call("POST", "/iam/v1/auth/signup", { key: pk, basic: true, headers: from(ip), json: { email: newEmail(), password: PASSWORD, name: "x" } })]) {
      const res = await attempt();
      expect(expectError(res, 429, "rate_limit_error").message).toMatch(/your address/);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Another address is not held back, and refused attempts did not count as wrong passwords.
    expect((await logIn(pk, email, PASSWORD, address())).status).toBe(200);
  });
});
