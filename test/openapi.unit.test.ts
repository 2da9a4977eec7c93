import { describe, expect, it } from "vitest";
import { GET } from "@/app/v1/openapi.json/route";
import { operations } from "@/lib/api";

describe("OpenAPI document", () => {
  it("describes every operation with resolvable schemas", async () => {
    const res = GET(new Request("http://127.0.0.1:3000/v1/openapi.json"));
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers[0].url).toBe("http://127.0.0.1:3000");
    for (const op of operations) {
      const entry = doc.paths[op.path]?.[op.method.toLowerCase()];
      expect(entry, `${op.method} ${op.path}`).toBeDefined();
      expect(entry.operationId).toBe(op.operationId);
      expect(entry.responses["200"].content["application/json"].schema).toBeTypeOf("object");
    }
    const refs: string[] = [];
    JSON.stringify(doc, (k, v) => {
      if (k === "$ref") refs.push(v);
      return v;
    });
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const target = ref.replace("#/", "").split("/").reduce((node: any, part) => node?.[part], doc);
      expect(target, ref).toBeTypeOf("object");
    }
  });

  it("shows form-friendly parameters as their JSON types", async () => {
    const doc = await GET(new Request("http://127.0.0.1:3000/v1/openapi.json")).json();
    const create = doc.paths["/v1/contracts"].post.requestBody.content["application/json"].schema;
    expect(create.required).toEqual(expect.arrayContaining(["name", "chainId", "address"]));
    expect(create.properties.chainId.type).toBe("integer");
    expect(create.properties.publicVerification.type).toBe("boolean");
    const list = doc.paths["/v1/players"].get.parameters.map((p: { name: string }) => p.name);
    expect(list).toEqual(expect.arrayContaining(["limit", "skip", "order", "expand", "name"]));
    expect(doc.paths["/v1/players/{id}"].get.parameters[0]).toMatchObject({ name: "id", in: "path", required: true });
  });
});
