import { z } from "zod";
import { expandField, listInput, metadataField, textField } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

export const playerExpandable = ["accounts", "transactionIntents"] as const;
const expand = expandField(playerExpandable);

export const createPlayerInput = z.strictObject({
  name: textField(255).optional(),
  description: textField(1000).optional(),
  email: z.email().max(320).optional(),
  metadata: metadataField().optional(),
  expand,
});

export const updatePlayerInput = createPlayerInput;

export const listPlayersInput = z.strictObject({
  ...listInput,
  expand,
  name: z.string().optional(),
  email: z.string().optional(),
});

export const getPlayerInput = z.strictObject({ expand });

export const playerResponse = z.object({
  id: z.string(),
  object: z.literal("player"),
  createdAt: z.number().int(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  description: z.string().nullable(),
  livemode: z.boolean(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
  accounts: z.array(idRef.loose()),
  transactionIntents: z.array(idRef.loose()),
});

export type PlayerResponse = z.infer<typeof playerResponse>;
export type CreatePlayerInput = z.output<typeof createPlayerInput>;
export type ListPlayersInput = z.output<typeof listPlayersInput>;
