import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { authOptions } from "@/lib/dashboard/auth";
import { getDb } from "@/lib/db/client";
import { projectsOf } from "@/lib/developers/service";

/** Signed in: the first project's test mode. Otherwise: sign in. */
export default async function Home() {
  const session = (await getServerSession(authOptions())) as { developerId?: string } | null;
  if (!session?.developerId) redirect("/login");
  const [first] = await projectsOf(await getDb(), session.developerId);
  if (!first) redirect("/login");
  redirect(`/projects/${first.id}/test`);
}
