import { ConsoleLogger, type LogArg, type Logger } from "inngest";
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
 * The Inngest SDK logs every step and function error with the error itself ("Inngest step
 * error"); a viem error there carries the RPC URL, a webhook error its receiver. Redacted first.
 */
export function redactingLogger(inner: Logger = new ConsoleLogger()): Logger {
  const level =
    (name: keyof Logger) =>
    (...args: LogArg[]) =>
      inner[name](...args.map(redactArg));
  return { info: level("info"), warn: level("warn"), error: level("error"), debug: level("debug") };
}
