import type { ManagedUpgrade } from "@/lib/accounts/managed";
import type { listProjects } from "@/lib/projects/service";

type Projects = Awaited<ReturnType<typeof listProjects>>;

/** `--project`, or the only project there is: an upgrade must never guess between projects. */
export function projectToUpgrade(projects: Projects, flag: string | undefined): { id: string; name: string } {
  if (flag !== undefined) {
    const project = projects.find((p) => p.id === flag);
    if (!project) throw new Error(`No such project: ${flag} (npm run cli -- project list shows them).`);
    return project;
  }
  if (projects.length === 1) return projects[0]!;
  if (projects.length === 0) throw new Error("There is no project yet: create one with npm run cli -- project create --name NAME.");
  throw new Error(`There are ${projects.length} projects; name one with --project: ${projects.map((p) => `${p.id} (${p.name})`).join(", ")}.`);
}

export function describeUpgrade(project: { id: string; name: string }, result: ManagedUpgrade): string {
  const lines = [`Project "${project.name}" (${project.id}), chain ${result.chainId}: beacon ${result.beacon}`];
  if (result.beaconTransactionHash) lines.push(`  deployed the beacon (transaction ${result.beaconTransactionHash})`);
  lines.push(
    result.transactionHash
      ? `  upgraded every managed account from ${result.previousImplementation} to ${result.implementation} (transaction ${result.transactionHash})`
      : `  already on ${result.implementation}; nothing sent`,
  );
  return lines.join("\n");
}
