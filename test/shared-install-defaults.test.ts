import crypto from "node:crypto";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { signUpAction } from "@/lib/dashboard/sign-up";
import { createInvite } from "@/lib/developers/invites";
import { signUpInput } from "@/lib/developers/schema";
import { projectsOf, signUp } from "@/lib/developers/service";
import { issueClaimToken } from "@/lib/projects/claims";
import { call, expectError, formData, newProject } from "./helpers/api";

/** Issue 29.14: what a shared install gets without any setting. */

const request = vi.hoisted(() => ({ address: "192.0.2.10" }));
vi.mock("next/headers", () => ({ headers: async () => new Headers({ "x-forwarded-for": request.address }) }));

const unique = () => `dev-${crypto.randomUUID()}@example.com`;
const input = (email = unique()) => signUpInput.parse({ email, password: "a long enough password", name: "Dev" });
const form = formData;

beforeAll(async () => {
  await getDb();
});
afterEach(() => {
  vi.unstubAllEnvs();
  request.address = `198.51.100.${crypto.randomInt(1, 255)}-${crypto.randomUUID().slice(0, 6)}`;
});

describe("sign-up is closed unless SIGNUP=open", () => {
  it("without SIGNUP, sign-up is refused clearly (service, form action, page); SIGNUP=open opens it", async () => {
    vi.stubEnv("SIGNUP", undefined);
    const db = await getDb();
    await expect(signUp(db, input())).rejects.toMatchObject({ status: 403, message: expect.stringContaining("invitation") });
    const refused = await signUpAction(form({ email: unique(), password: "a long enough password" }));
    expect(refused.error?.message).toMatch(/by invitation only/);
    const { default: SignUpPage } = await import("@/app/(auth)/signup/page");
    expect(renderToStaticMarkup(SignUpPage())).toContain("Sign-up is by invitation");
    // Anything but "open" keeps it closed (a typo must not open a shared install).
    vi.stubEnv("SIGNUP", "opne");
    await expect(signUp(db, input())).rejects.toMatchObject({ status: 403 });

    vi.stubEnv("SIGNUP", "open");
    expect(await signUpAction(form({ email: unique(), password: "a long enough password" }))).toEqual({ ok: true });
    expect((SignUpPage().props as { children: { props: { children: string } }[] }).children[0]!.props.children).toBe("Create your account");
  });

  it("the claim link and invitations still sign up by default: a fresh npm start stays two commands", async () => {
    vi.stubEnv("SIGNUP", undefined);
    const db = await getDb();
    const printed = await newProject("Default project");
    const { token } = await issueClaimToken(db, printed.id);
    expect(await signUpAction(form({ email: unique(), password: "a long enough password", claim: token }))).toEqual({ ok: true });
    const owner = await signUp(db, input(), { claim: (await issueClaimToken(db, (await newProject("Another")).id)).token });
    const org = (await projectsOf(db, owner.id))[0]!.organizationId;
    const email = unique();
    const invite = await createInvite(db, org, owner.id, email);
    const joined = await signUp(db, input(email), { invite: invite.token });
    expect((await projectsOf(db, joined.id)).map((p) => p.organizationId)).toEqual([org]);
  });
});

describe("/api/inngest in production", () => {
  const VARS = ["INNGEST_EVENT_KEY", "INNGEST_SIGNING_KEY", "INNGEST_SIGNING_KEY_FALLBACK", "INNGEST_DEV", "INNGEST_BASE_URL"];
  const freshRoute = async () => {
    vi.resetModules();
    return import("@/app/api/inngest/route");
  };
  const get = (route: Awaited<ReturnType<typeof freshRoute>>, method: "GET" | "PUT" | "POST" = "GET") =>
    route[method](new Request("http://127.0.0.1:3000/api/inngest?fnId=x&stepId=step", { method, body: method === "GET" ? undefined : "{}" }), { params: Promise.resolve({}) });
  const parsed = async (res: Response) => ({ status: res.status, headers: res.headers, body: await res.json() });

  it("refuses to serve functions without INNGEST_SIGNING_KEY (their calls would go unauthenticated)", async () => {
    for (const name of VARS) vi.stubEnv(name, undefined);
    vi.stubEnv("NODE_ENV", "production");
    vi.stubEnv("INNGEST_DEV", "1");
    const route = await freshRoute();
    for (const method of ["GET", "PUT", "POST"] as const) {
      const res = await parsed(await get(route, method));
      expect(expectError(res as never, 403, "permission_error").message).toMatch(/INNGEST_SIGNING_KEY/);
    }
    // With the key, the SDK serves and checks signatures itself: an unsigned introspection is its 401, not ours.
    vi.stubEnv("INNGEST_DEV", undefined);
    vi.stubEnv("INNGEST_SIGNING_KEY", `signkey-prod-${crypto.randomBytes(32).toString("hex")}`);
    const served = await (await freshRoute()).GET(new Request("http://127.0.0.1:3000/api/inngest"), { params: Promise.resolve({}) });
    expect(served.status).toBe(401);
    // Outside production (INNGEST_DEV against a local dev server) it serves as before.
    vi.stubEnv("INNGEST_SIGNING_KEY", undefined);
    vi.stubEnv("INNGEST_DEV", "1");
    vi.stubEnv("NODE_ENV", "development");
    expect((await get(await freshRoute())).status).toBe(200);
    vi.resetModules();
  });
});

describe("changing a sign-in provider's URLs asks for its secret again", () => {
  it("a new URL without the stored secret is a 400 naming it; with it, or changing nothing that points elsewhere, is fine", async () => {
    const project = await newProject();
    const key = project.keys.test.secret;
    const created = await call("POST", "/iam/v1/oauth", { key, json: { provider: "supabase", url: "http://127.0.0.1:9/supa", key: "supabase-service-key-1234" } });
    expect(created.status).toBe(200);
    const moved = await call("POST", "/iam/v1/oauth", { key, json: { provider: "supabase", url: "http://127.0.0.1:10/elsewhere" } });
    const error = expectError(moved, 400, "invalid_request_error");
    expect(error.message).toMatch(/key/);
    expect(error.details).toHaveProperty("key");
    // Nothing changed.
    expect((await call("GET", "/iam/v1/oauth/supabase", { key })).body).toMatchObject({ url: "http://127.0.0.1:9/supa" });
    const resent = await call("POST", "/iam/v1/oauth", { key, json: { provider: "supabase", url: "http://127.0.0.1:10/elsewhere", key: "supabase-service-key-5678" } });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ url: "http://127.0.0.1:10/elsewhere", key: "…5678" });
    // The same URL again, or another field, needs no secret.
    expect((await call("POST", "/iam/v1/oauth", { key, json: { provider: "supabase", url: "http://127.0.0.1:10/elsewhere", aud: "authenticated" } })).status).toBe(200);

    await call("POST", "/iam/v1/oauth", { key, json: { provider: "facebook", clientId: "1234", clientSecret: "facebook-app-secret-9876", baseUrl: "http://127.0.0.1:9/graph" } });
    const facebook = await call("POST", "/iam/v1/oauth", { key, form: { provider: "facebook", baseUrl: "http://127.0.0.1:11/graph" } });
    expect(expectError(facebook, 400).details).toHaveProperty("clientSecret");
  });
});
