import Link from "next/link";
import { SignUpForm } from "@/components/auth-forms";
import { sessionDeveloper } from "@/lib/dashboard/context";
import { getDb } from "@/lib/db/client";
import { describeInvite } from "@/lib/developers/invites";
import { linkAttempt } from "@/lib/dashboard/link-attempts";
import { LinkAction } from "../../link-action";

export const metadata = { title: "Join an organization" };

/** An organization owner's invitation: sign up with the invited email, or accept it signed in as that email. */
export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const db = await getDb();
  const limited = !(await linkAttempt(db)).allowed;
  const invite = limited ? null : await describeInvite(db, token);
  if (!invite) {
    return (
      <>
        <h1 className="mb-1 text-xl font-semibold">This invitation does not work</h1>
        <p className="text-sm text-slate-600">
          {limited ? "Too many attempts from your address: try again in a minute." : "It was used already, revoked, or has expired. Ask the organization's owner for a new one."}
        </p>
      </>
    );
  }
  const developer = await sessionDeveloper();
  return (
    <>
      <h1 className="mb-1 text-xl font-semibold">Join {invite.organizationName}</h1>
      {developer ? (
        developer.email === invite.email ? (
          <>
            <p className="mb-6 text-sm text-slate-600">You will see the organization&apos;s projects in your dashboard.</p>
            <LinkAction kind="invite" token={token} label={`Join ${invite.organizationName}`} />
          </>
        ) : (
          <p className="text-sm text-slate-600">
            This invitation is for {invite.email}, and you are signed in as {developer.email}. Sign out, then open the link again.
          </p>
        )
      ) : (
        <>
          <p className="mb-6 text-sm text-slate-600">
            Create your account as {invite.email}, or <Link href={`/login?next=${encodeURIComponent(`/invite/${token}`)}`} className="font-medium text-indigo-700 hover:underline">sign in</Link> if you have one.
          </p>
          <SignUpForm invite={{ token, email: invite.email }} />
        </>
      )}
    </>
  );
}
