import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { requestTransferOwnership } from "@/lib/account-actions/operations";
import { defineOperation, type PathParams } from "./operation";

// Type tests: `npx tsc --noEmit` (npm run typecheck) is what fails when the path parameters' types go wrong.
describe("path parameters typed from the operation's path", () => {
  it("names each parameter of the template, and only those", () => {
    expectTypeOf<PathParams<"/v1/subscriptions/{id}/triggers/{triggerId}">>().toEqualTypeOf<{ readonly id: string; readonly triggerId: string }>();
    expectTypeOf<keyof PathParams<"/v1/players">>().toBeNever();
    // A path built from a template whose tail is any string still has its parameters.
    expectTypeOf<Parameters<typeof requestTransferOwnership.run>[0]["params"]>().toEqualTypeOf<{ readonly id: string }>();
    // A path not known as a literal: any names (the pipeline's and the dashboard's view of every operation).
    expectTypeOf<PathParams<string>>().toEqualTypeOf<Record<string, string>>();
  });

  it("types `params` in run from `path`", () => {
    defineOperation({
      operationId: "typeTest",
      method: "GET",
      path: "/v1/things/{id}/parts/{partId}",
      summary: "",
      tag: "",
      input: z.object({}),
      response: z.string(),
      run: async ({ params }) => {
        expectTypeOf(params.id).toEqualTypeOf<string>();
        // @ts-expect-error not a parameter of the path
        void params.nope;
        return params.partId;
      },
    });
  });
});
