import { z } from "zod";
import { adminToken } from "@/lib/admin";
import { badRequest } from "@/lib/http/errors";
import { defineOperation } from "@/lib/http/operation";
import { adminCommand, AdminCommandError, runAdminCommand } from "./commands";

/** POST /api/admin: the CLI's way in while this server owns the embedded database; 404 for everyone else. */
export const runAdmin = defineOperation({
  operationId: "runAdminCommand",
  method: "POST",
  path: "/api/admin",
  summary: "Run a CLI command in this server",
  tag: "Admin",
  auth: adminToken,
  internal: true,
  input: adminCommand,
  response: z.unknown(),
  run: async ({ db, input }) => {
    try {
      return await runAdminCommand(db, input);
    } catch (err) {
      if (err instanceof AdminCommandError) throw badRequest(err.message);
      throw err;
    }
  },
});
