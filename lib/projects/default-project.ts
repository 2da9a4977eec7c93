import fs from "node:fs";
import path from "node:path";
import { dataDir } from "@/lib/config";
import type { Db } from "@/lib/db/client";
import { projects } from "@/lib/db/schema";
import { issueClaimToken } from "./claims";
import { createProject, type ProjectWithKeys } from "./service";

const fileOf = () => path.join(dataDir(), "default-project.json");

/**
 * On the first start against an empty database, creates a project so a new user has keys at
 * once; its keys are saved (mode 0600) under `.data/` for the user to find again. It belongs to
 * nobody until claimed with the one-time link answered here (never saved: printed once).
 */
export async function ensureDefaultProject(db: Db): Promise<{ project: ProjectWithKeys; created: boolean; claimToken?: string } | null> {
  const file = fileOf();
  if (fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as ProjectWithKeys;
    const [exists] = await db.select({ id: projects.id }).from(projects).limit(1);
    if (exists) return { project: saved, created: false };
  }
  const [any] = await db.select({ id: projects.id }).from(projects).limit(1);
  if (any) return null;
  const project = await createProject(db, "Default project");
  fs.mkdirSync(dataDir(), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(project, null, 2) + "\n", { mode: 0o600 });
  // No developer owns it yet: the one-time link printed with it lets whoever started the server take it.
  const { token } = await issueClaimToken(db, project.id);
  return { project, created: true, claimToken: token };
}
