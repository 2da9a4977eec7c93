import Link from "next/link";
import { SignUpForm } from "@/components/auth-forms";
import { sessionDeveloper } from "@/lib/dashboard/context";
import { getDb } from "@/lib/db/client";
import { linkAttempt } from "@/lib/dashboard/link-attempts";
import { claimableProject } from "@/lib/projects/claims";
import { LinkAction } from "../../link-action";

export const metadata = { title: "Claim a project" };

/**
 * The one-time link printed at first start: whoever opens it signed in (or signs up here) owns the
 * project, so the keys printed to the server's operator are theirs in the dashboard.
 */
export default async function ClaimPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const db = await getDb();
  const limited = !(await linkAttempt(db)).allowed;
  const project = limited ? null : await claimableProject(db, token);
  if (!project) {
    return (
      <>
        <h1 className="mb-1 text-xl font-semibold">This claim link does not work</h1>
        <p className="text-sm text-slate-600">
          {limited
            ? "Too many attempts from your address: try again in a minute."
            : "It was used already, or replaced by a newer one. Whoever runs the server can print a new one with npm run cli -- project claim-link."}
        </p>
      </>
    );
  }
  const developer = await sessionDeveloper();
  return (
    <>
      <h1 className="mb-1 text-xl font-semibold">Claim “{project.name}”</h1>
      {developer ? (
        <>
          <p className="mb-6 text-sm text-slate-600">
            The project and its keys move into the organization you own; this link then stops working. Signed in as {developer.email}.
          </p>
          <LinkAction kind="claim" token={token} label="Claim project" />
        </>
      ) : (
        <>
          <p className="mb-6 text-sm text-slate-600">
            Create your account to own this project and its keys, or <Link href={`/login?next=${encodeURIComponent(`/claim/${token}`)}`} className="font-medium text-indigo-700 hover:underline">sign in</Link> first.
          </p>
          <SignUpForm claim={token} />
        </>
      )}
    </>
  );
}
