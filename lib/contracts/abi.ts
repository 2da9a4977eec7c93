import { formatAbiItem, parseAbiItem, type Abi as AbitypeAbi } from "abitype";
import { z } from "zod";
import { booleanField } from "@/lib/http/fields";

interface AbiParameterInput {
  name?: string;
  type: string;
  internalType?: string;
  indexed?: boolean;
  components?: AbiParameterInput[];
}

const abiParameter: z.ZodType<AbiParameterInput> = z.lazy(() =>
  z.object({
    name: z.string().optional(),
    type: z.string().min(1),
    internalType: z.string().optional(),
    indexed: booleanField().optional(),
    components: z.array(abiParameter).optional(),
  }),
);

const stateMutability = z.enum(["pure", "view", "nonpayable", "payable"]);

const abiItem = z
  .object({
    // Old ABIs omit `type` on functions.
    type: z.enum(["function", "event", "error", "constructor", "fallback", "receive"]).default("function"),
    name: z.string().optional(),
    inputs: z.array(abiParameter).optional(),
    outputs: z.array(abiParameter).optional(),
    stateMutability: stateMutability.optional(),
    constant: booleanField().optional(),
    payable: booleanField().optional(),
    anonymous: booleanField().optional(),
    gas: z.union([z.string(), z.number()]).optional(),
  })
  .transform((item) => {
    // Pre-0.4.16 ABIs say `constant`/`payable`; viem and today's tools read `stateMutability`.
    if (item.type === "function" || item.type === "constructor" || item.type === "fallback" || item.type === "receive") {
      const derived = item.payable || item.type === "receive" ? "payable" : item.constant ? "view" : "nonpayable";
      return { ...item, inputs: item.inputs ?? [], stateMutability: item.stateMutability ?? derived };
    }
    return { ...item, inputs: item.inputs ?? [] };
  });

/**
 * An ABI: a JSON array (or, from a form, that array as a JSON string), each entry of which
 * viem can format to a human-readable signature and parse back, so its types are real types.
 */
export const abiField = () =>
  z.preprocess(
    (v) => {
      if (typeof v !== "string") return v;
      try {
        return JSON.parse(v);
      } catch {
        return v;
      }
    },
    z
      .array(abiItem)
      .max(2000)
      .superRefine((items, ctx) => {
        items.forEach((item, index) => {
          if ((item.type === "function" || item.type === "event" || item.type === "error") && !item.name) {
            ctx.addIssue({ code: "custom", path: [index, "name"], message: `A ${item.type} entry needs a name.` });
            return;
          }
          try {
            const signature = formatAbiItem(item as AbitypeAbi[number]);
            // A type such as `uint256,uint256` or `address payable` formats to a signature that
            // parses, but as other parameters: only an entry that reads back the same is real.
            const reparsed = formatAbiItem(parseAbiItem(signature) as AbitypeAbi[number]);
            if (reparsed !== signature) throw new Error(`'${signature}' reads back as '${reparsed}'.`);
          } catch (err) {
            const reason = err instanceof Error ? err.message.split("\n")[0] : String(err);
            ctx.addIssue({ code: "custom", path: [index], message: `Not a valid ABI entry: ${reason}` });
          }
        });
      }),
  );

export type Abi = z.output<ReturnType<typeof abiField>>;
