import { maxUint256 } from "viem";
import { z } from "zod";
import { addressField, booleanField, chainIdField, expandField, integerField, listField, listInput } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

export const intentExpandable = ["player", "policy", "account"] as const;
const expand = expandField(intentExpandable);

const amount = z.preprocess(
  (v) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : v),
  z
    .string()
    .regex(/^(\d{1,78}|0x[0-9a-fA-F]{1,64})$/, "Expected a non-negative amount in wei (decimal or 0x hex)")
    // 78 digits reach past 2^256: the EVM's value is a uint256.
    .refine((v) => !/^\d{78}$/.test(v) || BigInt(v) <= maxUint256, "Amount exceeds the largest uint256 (2^256 - 1)"),
);

const word = z.string().regex(/^0x[0-9a-fA-F]{1,64}$/, "Expected a 0x-prefixed hex number of at most 32 bytes");

/** An EIP-7702 authorization signed by a Delegated_v08 account's EOA: viem's SignedAuthorization JSON. */
export const signedAuthorizationField = z
  .strictObject({
    address: addressField().optional(),
    contractAddress: addressField().optional(),
    chainId: integerField({ min: 0 }),
    nonce: integerField({ min: 0 }),
    r: word,
    s: word,
    yParity: integerField({ min: 0, max: 1 }).optional(),
    v: integerField({ min: 0 }).optional(),
  })
  .describe(
    "Delegated_v08 accounts whose EOA does not delegate to this service's DelegatedAccountV8 yet: the owner's EIP-7702 authorization for it (viem's signAuthorization result: address (or contractAddress) = the implementation, chainId, nonce = the EOA's current transaction nonce, r, s, yParity). Without it, an owner-held account's first intent answers nextAction sign_authorization saying what to sign.",
  );

/** A call: a registered contract's function with arguments, or raw `to` (+ `data`); either may send `value`. */
const interaction = z.strictObject({
  contract: z.string().startsWith("con_", "Expected a contract id (con_...)").optional(),
  functionName: z.string().min(1).max(200).optional(),
  functionArgs: z.array(z.unknown()).max(50).optional(),
  to: addressField().optional(),
  data: z.string().regex(/^0x([0-9a-fA-F]{2})*$/, "Expected 0x-prefixed hex bytes").max(200_000).optional(),
  value: amount.optional(),
});

export const createIntentInput = z.strictObject({
  chainId: chainIdField(),
  interactions: z.array(interaction).min(1, "At least one interaction").max(50),
  player: z.string().startsWith("pla_", "Expected a player id (pla_...)").optional(),
  account: z.string().regex(/^(acc|dac)_/, "Expected an account id (acc_... or dac_...)").optional(),
  policy: z.string().startsWith("pol_", "Expected a policy id (pol_...)").optional(),
  externalOwnerAddress: addressField().optional(),
  optimistic: booleanField().optional(),
  confirmationBlocks: integerField({ min: 0, max: 100 }).optional(),
  fallback: z
    .enum(["self_pay"])
    .optional()
    .describe(
      "self_pay: when the policy declines to sponsor (402 sponsorship_declined), build the intent without the paymaster, paid from the account's own native balance, recording the decline as sponsorshipDecline. An account that cannot pay keeps the decline.",
    ),
  session: z
    .string()
    .startsWith("ses_", "Expected a session id (ses_...)")
    .optional()
    .describe(
      "A session (ses_) of the intent's account whose key signs this intent: it comes back awaiting_signature with nextAction even for a custodial account, and its signature goes to POST /v1/transaction_intents/{id}/signature. Refused with a 400 when the key is expired, not valid yet, out of uses or the calls leave its whitelist. account may then be omitted.",
    ),
  signedAuthorization: signedAuthorizationField.optional(),
  expand,
});

export const listIntentsInput = z.strictObject({
  ...listInput,
  expand,
  chainId: integerField().optional(),
  account: listField(z.string()).optional(),
  player: listField(z.string()).optional(),
  policy: listField(z.string()).optional(),
  status: integerField({ min: 0, max: 1 }).optional(),
});

export const getIntentInput = z.strictObject({ expand });

export const signatureInput = z.strictObject({
  signature: z
    .string({ error: "signature is required" })
    .regex(/^0x[0-9a-fA-F]+$/, "Expected a 0x-prefixed hex signature")
    .describe(
      "EntryPoint v0.6 accounts: personal_sign of the userOperationHash's 32 bytes; v0.8 accounts (Upgradeable_v08, Delegated_v08): the raw ECDSA signature of the userOperationHash, i.e. eth_signTypedData_v4 of nextAction.payload.typedData. By the account's owner or by one of its active session keys. A session key's is checked against the chain first: window, uses left (counting its intents in flight), whitelisted targets, never the account itself; a refusal is a 400 naming why.",
    ),
  signedAuthorization: signedAuthorizationField.optional(),
  optimistic: booleanField().optional(),
});

/** A userOperation's fields as hex strings; a v0.8 op's eip7702Auth is an object of them. */
const hexRecord = z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())]));

export const intentResponse = z.object({
  id: z.string(),
  object: z.literal("transactionIntent"),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  chainId: z.number().int(),
  abstractionType: z.enum(["accountAbstractionV6", "accountAbstractionV8"]),
  userOperationHash: z.string(),
  userOperation: hexRecord,
  details: z.object({ userOperationHash: z.string(), userOperation: hexRecord }),
  interactions: z.array(z.record(z.string(), z.unknown())),
  /** Only for an operation a client built and signed itself and sent to the bundler RPC (POST /rpc/{chainId}). */
  source: z.literal("rpc").describe("rpc: a client's own signed operation sent to the bundler RPC (POST /rpc/{chainId}); absent for intents the API built.").optional(),
  player: idRef.loose().optional(),
  account: idRef.loose(),
  policy: idRef.loose().optional(),
  /** fallback=self_pay: the decline the intent fell back from; the account pays its own gas. */
  sponsorshipDecline: z
    .object({
      code: z.string(),
      message: z.string(),
      policy: z.string().optional(),
      rule: z.string().optional(),
      remaining: z.string().optional(),
      resetsAt: z.number().int().optional(),
    })
    .loose()
    .describe("With fallback=self_pay: the policy's decline this intent fell back from (it pays its own gas).")
    .optional(),
  response: z
    .object({
      createdAt: z.number().int(),
      blockNumber: z.number().int(),
      transactionHash: z.string(),
      to: z.string(),
      gasUsed: z.string(),
      gasFee: z.string(),
      status: z.union([z.literal(0), z.literal(1)]),
      logs: z.array(z.record(z.string(), z.unknown())),
      error: z.string().optional(),
    })
    .optional(),
  nextAction: z
    .object({
      type: z.enum(["sign_with_wallet", "sign_authorization"]),
      payload: z.object({
        userOperationHash: z.string(),
        userOperation: hexRecord,
        userOpHash: z.string(),
        userOp: hexRecord,
        /**
         * How the hash is signed: personal_sign (EntryPoint v0.6 accounts) or the raw hash, which for v0.8 is the EIP-712
         * digest of typedData (eth_signTypedData_v4 of typedData gives the same signature).
         */
        signWith: z.enum(["personal_sign", "typed_data"]).optional(),
        typedData: z.record(z.string(), z.unknown()).optional(),
        /** sign_authorization: the EIP-7702 authorization the owner's EOA signs first (then the op, with the same request). */
        authorization: z.object({ contractAddress: z.string(), address: z.string(), chainId: z.number().int(), nonce: z.number().int() }).optional(),
        /** The signing page for the account's owner: an unguessable link that expires with the sponsorship (or in an hour). */
        signingUrl: z.string().optional(),
      }),
    })
    .optional(),
});

export type IntentResponse = z.infer<typeof intentResponse>;
export type CreateIntentInput = z.output<typeof createIntentInput>;
export type ListIntentsInput = z.output<typeof listIntentsInput>;
export type InteractionInput = z.output<typeof interaction>;
