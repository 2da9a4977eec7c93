import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OTHER_ROUTE_FILES, rendered, routeFilesOnDisk, routeTable } from "@/scripts/routes";
import { endpoints } from "./endpoints";

describe("the route files", () => {
  it("are what `npm run routes` writes from the operations", async () => {
    const files = await rendered();
    for (const [file, text] of Object.entries(files)) {
      const current = fs.existsSync(path.join(process.cwd(), file)) ? fs.readFileSync(path.join(process.cwd(), file), "utf8") : null;
      expect(current === text, `${file} is stale: run npm run routes`).toBe(true);
    }
  });

  it("serve operations, but for the few listed apart: none left from an endpoint that is gone", async () => {
    const generated = Object.keys(await rendered());
    const stray = routeFilesOnDisk().filter((file) => !generated.includes(file) && !(file in OTHER_ROUTE_FILES));
    expect(stray, "delete them, or list them in OTHER_ROUTE_FILES (scripts/routes.ts)").toEqual([]);
    for (const file of Object.keys(OTHER_ROUTE_FILES)) expect(routeFilesOnDisk(), file).toContain(file);
  });

  it("one file per path, one operation per method, and an operation id once", () => {
    const table = routeTable(endpoints);
    expect([...table.values()].reduce((n, entry) => n + entry.ops.length, 0)).toBe(endpoints.length);
    const ids = endpoints.map((op) => op.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(table.get("app/v1/players/[id]/route.ts")?.ops.map((op) => op.method)).toEqual(["GET", "POST", "DELETE"]);
    expect(table.get("app/(dashboard)/projects/[projectId]/[mode]/reports/csv/route.ts")?.path).toBe("/projects/{projectId}/{mode}/reports/csv");
  });
});
