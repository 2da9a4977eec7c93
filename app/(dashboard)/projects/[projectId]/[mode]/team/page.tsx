import { eq } from "drizzle-orm";
import { Card, PageHeader } from "@/components/page";
import { Time } from "@/components/time";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { getDb } from "@/lib/db/client";
import { projects } from "@/lib/db/schema";
import { team } from "@/lib/developers/invites";
import { unixSeconds } from "@/lib/http/resource";
import { InviteForm, RevokeInvite } from "./forms";

export const metadata = { title: "Team" };

/** The members of the project's organization; its owner invites developers here (the only way in with SIGNUP=closed). */
export default async function TeamPage({ params }: { params: ScopeParams }) {
  const scope = await scopeOf(params);
  const db = await getDb();
  const [project] = await db.select({ organizationId: projects.organizationId }).from(projects).where(eq(projects.id, scope.project.id));
  const { members, invites } = await team(db, project!.organizationId!);
  const isOwner = members.some((m) => m.id === scope.developerId && m.role === "owner");
  return (
    <>
      <PageHeader title="Team" description={`The developers of ${scope.project.organizationName}: each sees all of its projects.`} />
      <Card title="Members">
        <ul className="divide-y divide-slate-100">
          {members.map((m) => (
            <li key={m.id} className="flex flex-wrap items-center gap-3 py-2 text-sm">
              <span className="font-medium">{m.name ?? m.email}</span>
              <span className="text-slate-600">{m.email}</span>
              <span className="ml-auto text-xs capitalize text-slate-500">{m.role}</span>
            </li>
          ))}
        </ul>
      </Card>
      {isOwner ? (
        <Card title="Invitations">
          {invites.length > 0 && (
            <ul className="mb-4 divide-y divide-slate-100">
              {invites.map((i) => (
                <li key={i.id} className="flex flex-wrap items-center gap-3 py-2 text-sm">
                  <span>{i.email}</span>
                  <span className="text-xs text-slate-500">
                    expires <Time seconds={unixSeconds(i.expiresAt)} />
                  </span>
                  <span className="ml-auto">
                    <RevokeInvite projectId={scope.project.id} mode={scope.mode} inviteId={i.id} email={i.email} />
                  </span>
                </li>
              ))}
            </ul>
          )}
          <InviteForm projectId={scope.project.id} mode={scope.mode} />
        </Card>
      ) : (
        <p className="text-sm text-slate-600">Only the organization&apos;s owner can invite developers.</p>
      )}
    </>
  );
}
