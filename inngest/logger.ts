import type { LogArg, Logger } from "inngest";
import { log } from "@/lib/log";
import { errorText, redact } from "@/lib/redact";

const redactValue = (value: unknown): unknown => (typeof value === "string" ? redact(value) : value instanceof Error ? errorText(value) : value);

// Pino-style calls pass `({ err, ...fields }, "message")`: the fields are redacted one level deep.
const redactArg = (arg: LogArg): LogArg => {
  if (arg && typeof arg === "object" && !Array.isArray(arg) && !(arg instanceof Error)) {
    return Object.fromEntries(Object.entries(arg).map(([k, v]) => [k, redactValue(v)]));
  }
  return redactValue(arg);
};

/**
 * The Inngest SDK's logs, into the service's (lib/log.ts). The SDK logs every step and function
 * error with the error itself ("Inngest step error"); a viem error there carries the RPC URL, a
 * webhook error its receiver: redacted first.
 */
export function redactingLogger(inner: Logger = log as unknown as Logger): Logger {
  const level =
    (name: keyof Logger) =>
    (...args: LogArg[]) => {
      const [first, ...rest] = args.map(redactArg);
      // ("message", error, …) as the SDK calls: pino would drop what follows a message without placeholders.
      if (typeof first === "string" && rest.length) inner[name]({ details: rest } as unknown as LogArg, first);
      else inner[name](...([first, ...rest] as LogArg[]));
    };
  return { info: level("info"), warn: level("warn"), error: level("error"), debug: level("debug") };
}
