// Liveness: the process answers. Constant JSON, no authentication, no database: also the bench's framework floor.
export const dynamic = "force-dynamic";

export function GET() {
  return Response.json({ status: "ok" });
}
