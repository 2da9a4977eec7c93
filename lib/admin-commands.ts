import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { ApiError } from "@/lib/errors";
import { findChain } from "@/lib/chain/registry";
import { reconcileChain } from "@/lib/follower/reconcile";
import { creditProject, sponsorshipStatus } from "@/lib/sponsorship/admin";
import { issueClaimToken } from "@/lib/projects/claims";
import { createProject, listProjects, rollKeys } from "@/lib/projects/service";

/** What the CLI can do: run directly on the database, or handed to the server that owns the embedded one. */
export const adminCommand = z.discriminatedUnion("command", [
  z.object({ command: z.literal("project.create"), name: z.string().trim().min(1).max(255) }),
  z.object({ command: z.literal("project.list") }),
  z.object({ command: z.literal("keys.roll"), project: z.string().min(1), modes: z.array(z.enum(["test", "live"])).min(1) }),
  z.object({ command: z.literal("project.claimLink"), project: z.string().min(1).optional() }),
  // sponsorship ledger (lib/sponsorship/admin.ts)
  z.object({
    command: z.literal("sponsorship.credit"),
    project: z.string().min(1),
    mode: z.enum(["test", "live"]),
    chainId: z.number().int().positive(),
    amount: z.string().regex(/^-?\d{1,78}$/),
    cause: z.enum(["funding", "correction"]),
    note: z.string().max(500).optional(),
    reference: z.string().min(1).max(300),
  }),
  z.object({ command: z.literal("sponsorship.status"), chainId: z.number().int().positive().optional() }),
  z.object({
    command: z.literal("sponsorship.reconcile"),
    chainId: z.number().int().positive(),
    from: z.number().int().nonnegative().optional(),
    to: z.number().int().nonnegative().optional(),
  }),
]);

export type AdminCommand = z.infer<typeof adminCommand>;

export class AdminCommandError extends Error {}

export async function runAdminCommand(db: Db, cmd: AdminCommand): Promise<unknown> {
  switch (cmd.command) {
    case "project.create":
      return createProject(db, cmd.name);
    case "project.list":
      return listProjects(db);
    case "project.claimLink": {
      try {
        return await issueClaimToken(db, cmd.project);
      } catch (err) {
        if (err instanceof ApiError) throw new AdminCommandError(err.message);
        throw err;
      }
    }
    case "sponsorship.credit":
    case "sponsorship.status":
      try {
        return cmd.command === "sponsorship.credit" ? await creditProject(db, cmd) : await sponsorshipStatus(db, cmd.chainId);
      } catch (err) {
        if (err instanceof ApiError) throw new AdminCommandError(err.message);
        throw err;
      }
    case "sponsorship.reconcile": {
      const chain = findChain(cmd.chainId);
      if (!chain) throw new AdminCommandError(`No configured chain ${cmd.chainId}; see npm run cli -- chain list`);
      return reconcileChain(db, chain, { from: cmd.from, to: cmd.to });
    }
    case "keys.roll": {
      const keys: Record<string, unknown> = {};
      for (const mode of cmd.modes) {
        const rolled = await rollKeys(db, cmd.project, mode);
        if (!rolled) throw new AdminCommandError(`No such project: ${cmd.project}`);
        keys[mode] = rolled;
      }
      return { id: cmd.project, keys };
    }
  }
}
