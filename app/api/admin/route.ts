import { isAdminToken } from "@/lib/admin";
import { getDb } from "@/lib/db/client";
import { adminCommand, AdminCommandError, runAdminCommand } from "@/lib/projects/commands";

/** The CLI's way in while this server owns the embedded database; 404 for everyone else. */
export async function POST(request: Request) {
  const token = request.headers.get("authorization")?.replace(/^Bearer\s+/i, "") ?? null;
  if (!isAdminToken(token)) return Response.json({ error: { type: "invalid_request_error", message: "Not found." } }, { status: 404 });
  const parsed = adminCommand.safeParse(await request.json().catch(() => null));
  if (!parsed.success) return Response.json({ error: { type: "invalid_request_error", message: parsed.error.message } }, { status: 400 });
  try {
    return Response.json(await runAdminCommand(await getDb(), parsed.data));
  } catch (err) {
    if (err instanceof AdminCommandError) return Response.json({ error: { type: "invalid_request_error", message: err.message } }, { status: 400 });
    throw err;
  }
}
