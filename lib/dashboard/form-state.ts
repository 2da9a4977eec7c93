import type { ErrorDetails } from "@/lib/errors";

/** What a dashboard form's server action answers: the API's error, or what it made. */
export interface FormState {
  ok?: boolean;
  error?: { message: string; details?: ErrorDetails };
  data?: Record<string, unknown>;
}
