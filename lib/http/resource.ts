import { z } from "zod";

/** Unix seconds, as every timestamp in the API. */
export const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

export const idRef = z.object({ id: z.string() });

export const deletedResource = (object: string) =>
  z.object({ id: z.string(), object: z.literal(object), deleted: z.literal(true) });

export const listResponse = <T extends z.ZodType>(item: T) =>
  z.object({
    object: z.literal("list"),
    url: z.string(),
    start: z.number().int(),
    end: z.number().int(),
    total: z.number().int(),
    data: z.array(item),
  });
