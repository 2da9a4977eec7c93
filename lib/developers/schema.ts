import { z } from "zod";

export const signUpInput = z.strictObject({
  name: z.string().trim().max(255).optional(),
  email: z.email("Enter a valid email address.").max(320).transform((e) => e.toLowerCase()),
  password: z.string().min(10, "Use at least 10 characters.").max(256, "Use at most 256 characters."),
  organization: z.string().trim().max(255).optional(),
});
export type SignUpInput = z.output<typeof signUpInput>;

export const signInInput = z.object({
  email: z.string().trim().max(320).transform((e) => e.toLowerCase()),
  password: z.string().max(256),
});
