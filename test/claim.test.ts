import crypto from "node:crypto";
import { eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { developers, projects } from "@/lib/db/schema";
import { authOptions } from "@/lib/dashboard/auth";
import { checkSignIn } from "@/lib/dashboard/sign-in";
import { signUpAction } from "@/lib/dashboard/sign-up";
import { acceptInvite, createInvite, describeInvite, INVITE_TTL_MS, revokeInvite, team } from "@/lib/developers/invites";
import { signUpInput } from "@/lib/developers/schema";
import { projectsOf, signUp } from "@/lib/developers/service";
import { claimableProject, claimProject, issueClaimToken } from "@/lib/projects/claims";
import { AdminCommandError, runAdminCommand } from "@/lib/admin-commands";
import { formData, newProject } from "./helpers/api";
import { withinOneMinuteWindow } from "./helpers/credentials-fixtures";

// Server actions read the client's address from the request's headers: one address per test.
const request = vi.hoisted(() => ({ address: "192.0.2.1" }));
vi.mock("next/headers", () => ({ headers: async () => new Headers({ "x-forwarded-for": request.address }) }));
// Counts password checks (the memory-hard hash), to see one sign-in hash the password once.
const hashed = vi.hoisted(() => ({ count: 0 }));
vi.mock("@/lib/keys/password", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/keys/password")>();
  return { ...actual, verifyPassword: (...args: Parameters<typeof actual.verifyPassword>) => (hashed.count++, actual.verifyPassword(...args)) };
});

const unique = () => `dev-${crypto.randomUUID()}@example.com`;
const input = (email = unique()) => signUpInput.parse({ email, password: "a long enough password", name: "Dev" });
const ownerOf = async (projectId: string) => (await (await getDb()).select({ org: projects.organizationId }).from(projects).where(eq(projects.id, projectId)))[0]!.org;
const organizationOf = async (developerId: string) => (await projectsOf(await getDb(), developerId))[0]!.organizationId;
const form = formData;

beforeAll(async () => {
  await getDb();
});
afterEach(() => {
  vi.unstubAllEnvs();
  request.address = `198.51.100.${crypto.randomInt(1, 255)}-${crypto.randomUUID().slice(0, 6)}`;
});

describe("claiming the printed project", () => {
  it("signing up claims no project; the claim link hands it over once", async () => {
    const db = await getDb();
    const printed = await newProject("Default project");
    const { token } = await issueClaimToken(db, printed.id);
    const first = await signUp(db, input());
    expect(await ownerOf(printed.id)).toBeNull();
    expect((await projectsOf(db, first.id)).map((p) => p.name)).toEqual(["My first project"]);
    expect(await claimableProject(db, token)).toMatchObject({ id: printed.id, name: "Default project" });
    const claimed = await claimProject(db, token, first.id);
    expect(claimed.id).toBe(printed.id);
    expect(await ownerOf(printed.id)).toBe(await organizationOf(first.id));
    // Burnt: neither the same developer nor another can use it again.
    const second = await signUp(db, input());
    await expect(claimProject(db, token, second.id)).rejects.toMatchObject({ status: 400 });
    expect(await claimableProject(db, token)).toBeNull();
    expect(await ownerOf(printed.id)).toBe(await organizationOf(first.id));
  });

  it("signs up through the claim link: the project is the new organization's, without a project of its own", async () => {
    const db = await getDb();
    const printed = await newProject("Default project");
    const { token } = await issueClaimToken(db, printed.id);
    const developer = await signUp(db, input(), { claim: token });
    expect((await projectsOf(db, developer.id)).map((p) => p.id)).toEqual([printed.id]);
    // A bad link refuses the whole sign-up: no developer is left behind.
    const email = unique();
    await expect(signUp(db, input(email), { claim: token })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("claim link") });
    expect(await db.select().from(developers).where(eq(developers.email, email))).toEqual([]);
  });

  it("a new link replaces the lost one; owned projects get none (CLI: project claim-link)", async () => {
    const db = await getDb();
    const printed = await newProject("Default project");
    const old = await issueClaimToken(db, printed.id);
    const fresh = (await runAdminCommand(db, { command: "project.claimLink", project: printed.id })) as { token: string; project: { id: string } };
    expect(fresh.project.id).toBe(printed.id);
    expect(await claimableProject(db, old.token)).toBeNull();
    const developer = await signUp(db, input());
    await expect(claimProject(db, old.token, developer.id)).rejects.toMatchObject({ status: 400 });
    await claimProject(db, fresh.token, developer.id);
    await expect(runAdminCommand(db, { command: "project.claimLink", project: printed.id })).rejects.toBeInstanceOf(AdminCommandError);
    await expect(runAdminCommand(db, { command: "project.claimLink", project: "pro_missing" })).rejects.toThrow(/No such project/);
  });

  it("only an organization's owner claims into it", async () => {
    const db = await getDb();
    const owner = await signUp(db, input());
    const memberEmail = unique();
    const { token: inviteToken } = await createInvite(db, await organizationOf(owner.id), owner.id, memberEmail);
    const member = await signUp(db, input(memberEmail), { invite: inviteToken });
    const printed = await newProject("Default project");
    const { token } = await issueClaimToken(db, printed.id);
    await expect(claimProject(db, token, member.id)).rejects.toMatchObject({ status: 403 });
    expect(await claimableProject(db, token)).not.toBeNull(); // refused, not burnt
  });
});

describe("invitations and SIGNUP=closed", () => {
  it("closed sign-up refuses without an invitation or claim link, in the service and the form's action", async () => {
    vi.stubEnv("SIGNUP", "closed");
    const db = await getDb();
    await expect(signUp(db, input())).rejects.toMatchObject({ status: 403, message: expect.stringContaining("invitation") });
    const refused = await signUpAction(form({ email: unique(), password: "a long enough password" }));
    expect(refused.error?.message).toMatch(/by invitation only/);
    // The very first developer still gets in through the printed project's claim link.
    const printed = await newProject("Default project");
    const { token } = await issueClaimToken(db, printed.id);
    const first = await signUpAction(form({ email: unique(), password: "a long enough password", claim: token }));
    expect(first).toEqual({ ok: true });
    expect(await claimableProject(db, token)).toBeNull();
  });

  it("an owner's invitation signs up into their organization once, for its email only, within 7 days", async () => {
    vi.stubEnv("SIGNUP", "closed");
    const db = await getDb();
    const printed = await newProject("Default project");
    const owner = await signUp(db, input(), { claim: (await issueClaimToken(db, printed.id)).token });
    const org = await organizationOf(owner.id);
    const email = unique();
    const { token } = await createInvite(db, org, owner.id, email);
    expect(await describeInvite(db, token)).toMatchObject({ email });
    await expect(signUp(db, input(unique()), { invite: token })).rejects.toMatchObject({ status: 400, message: expect.stringContaining(email) });
    const joined = await signUp(db, input(email), { invite: token });
    expect((await projectsOf(db, joined.id)).map((p) => p.id)).toEqual([printed.id]);
    expect((await team(db, org)).members.map((m) => [m.email, m.role])).toContainEqual([email, "member"]);
    await expect(signUp(db, input(unique()), { invite: token })).rejects.toMatchObject({ status: 400 });
    expect(await describeInvite(db, token)).toBeNull();
    // Members do not invite; expired and revoked links do not work.
    await expect(createInvite(db, org, joined.id, unique())).rejects.toMatchObject({ status: 403 });
    const late = unique();
    const expired = await createInvite(db, org, owner.id, late, new Date(Date.now() - INVITE_TTL_MS - 1000));
    await expect(signUp(db, input(late), { invite: expired.token })).rejects.toMatchObject({ status: 400 });
    const revoked = await createInvite(db, org, owner.id, late);
    expect(await revokeInvite(db, org, owner.id, revoked.invite.id)).toBe(true);
    expect(await describeInvite(db, revoked.token)).toBeNull();
    expect((await team(db, org)).invites).toEqual([]);
  });

  it("a developer with an account accepts an invitation signed in as its email", async () => {
    const db = await getDb();
    const owner = await signUp(db, input());
    const org = await organizationOf(owner.id);
    const email = unique();
    const existing = await signUp(db, input(email));
    const other = await signUp(db, input());
    const { token } = await createInvite(db, org, owner.id, email);
    await expect(acceptInvite(db, token, other.id)).rejects.toMatchObject({ status: 400 });
    await acceptInvite(db, token, existing.id);
    expect((await projectsOf(db, existing.id)).map((p) => p.organizationId)).toContain(org);
    await expect(acceptInvite(db, token, existing.id)).rejects.toMatchObject({ status: 400 });
    await expect(createInvite(db, org, owner.id, email)).rejects.toMatchObject({ status: 400, message: expect.stringContaining("already a member") });
  });
});

describe("sign-in and sign-up limits per client address", () => {
  it("the sign-in check answers 'too many' after N attempts from one address, whichever emails", async () => {
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "3");
    // The limit counts per clock minute: four attempts that straddle a minute's end (a loaded machine hashing
    // passwords slowly) start a new count, so such a run is tried again from a fresh address.
    let attempts: Awaited<ReturnType<typeof checkSignIn>>[] = [];
    for (let run = 0; run < 3; run++) {
      request.address = `203.0.113.${run + 1}-${crypto.randomUUID().slice(0, 6)}`;
      const minute = Math.floor(Date.now() / 60_000);
      attempts = [];
      for (let i = 0; i < 4; i++) attempts.push(await checkSignIn(form({ email: unique(), password: "wrong password" })));
      if (Math.floor(Date.now() / 60_000) === minute) break;
    }
    expect(attempts.slice(0, 3).map((a) => a.error?.message)).toEqual(Array(3).fill("Wrong email or password."));
    expect(attempts[3]!.error?.message).toMatch(/Too many sign-in attempts/);
    request.address = "192.0.2.200";
    expect((await checkSignIn(form({ email: unique(), password: "wrong password" }))).error?.message).toBe("Wrong email or password.");
  });

  it("next-auth's credentials sign-in refuses even the right password past the limit", async () => {
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "2");
    const db = await getDb();
    const email = unique();
    await signUp(db, input(email));
    const credentials = authOptions().providers[0] as unknown as { options: { authorize: (c: unknown, r: unknown) => Promise<unknown> } };
    const from = { headers: { "x-forwarded-for": `192.0.2.${crypto.randomInt(1, 255)}-${crypto.randomUUID()}` } };
    const good = { email, password: "a long enough password" };
    expect(await credentials.options.authorize({ email, password: "wrong one" }, from)).toBeNull();
    expect(await credentials.options.authorize(good, from)).toMatchObject({ email });
    expect(await credentials.options.authorize(good, from)).toBeNull();
    expect(await credentials.options.authorize(good, { headers: { "x-forwarded-for": "192.0.2.250" } })).toMatchObject({ email });
  });

  it("one sign-in hashes the password once: the check's proof signs in, once, for its email only", async () => {
    const db = await getDb();
    const email = unique();
    await signUp(db, input(email));
    const credentials = authOptions().providers[0] as unknown as { options: { authorize: (c: unknown, r: unknown) => Promise<unknown> } };
    const from = { headers: { "x-forwarded-for": `192.0.2.${crypto.randomInt(1, 255)}-${crypto.randomUUID()}` } };
    hashed.count = 0;
    const checked = await checkSignIn(form({ email, password: "a long enough password" }));
    expect(checked).toMatchObject({ ok: true, data: { proof: expect.any(String) } });
    const proof = checked.data!.proof as string;
    expect(await credentials.options.authorize({ email: unique(), proof }, from)).toBeNull();
    expect(await credentials.options.authorize({ email, proof: `${proof}x` }, from)).toBeNull();
    expect(await credentials.options.authorize({ email, proof }, from)).toMatchObject({ email });
    expect(hashed.count).toBe(1);
    // Taken once: a copied proof does not sign in again.
    expect(await credentials.options.authorize({ email, proof }, from)).toBeNull();
    // Without a proof (the sign-up form signs in at once; any direct POST), the password is checked as before.
    expect(await credentials.options.authorize({ email, password: "a long enough password" }, from)).toMatchObject({ email });
    expect(hashed.count).toBe(2);
  });

  it("sign-up answers 'too many' after N from one address", async () => {
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "2");
    // The limit counts in fixed minutes: three sign-ups across a minute's end would be two windows (a CI run's failure).
    await withinOneMinuteWindow(15);
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await signUpAction(form({ email: unique(), password: "a long enough password" })));
    expect(results.slice(0, 2)).toEqual([{ ok: true }, { ok: true }]);
    expect(results[2]!.error?.message).toMatch(/Too many sign-ups/);
  });
});
