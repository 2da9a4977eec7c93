// `npm run drill -- crash|burst|outage|chain [--short]`: failure drills against a production server (`next start`) on a
// fresh database of the PostgreSQL server at DATABASE_URL, a real anvil chain and a real webhook receiver (issue 19).
// crash: SIGKILLs, an anvil restart and cut database connections under a stream of intents and deliveries;
// burst: a thousand intents at once over ten accounts; outage: a receiver down for ten minutes; chain: reorgs, fee
// spikes, dropped transactions and a faulty node under every kind of sponsored op, the books checked against the chain
// (issue 40). --short: the CI form (fewer kills, intents and faults, a 25 s outage). Each prints a table and a verdict
// line; the exit code is the verdict.
import { parseArgs } from "node:util";
import { burstDrill } from "./drills/burst";
import { chainDrill } from "./drills/chain";
import { crashDrill } from "./drills/crash";
import { outageDrill } from "./drills/outage";

const DRILLS: Record<string, (short: boolean) => Promise<number>> = { crash: crashDrill, burst: burstDrill, outage: outageDrill, chain: chainDrill };

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { short: { type: "boolean", default: false } }, allowPositionals: true });
  const drill = positionals.length === 1 ? DRILLS[positionals[0]!] : undefined;
  if (!drill) {
    console.error("usage: npm run drill -- crash|burst|outage|chain [--short]");
    return 2;
  }
  // The drills are about the PostgreSQL deployment (they cut its connections, and instances share it): no PGlite.
  if (!process.env.DATABASE_URL) {
    console.error("The drills run on PostgreSQL: set DATABASE_URL, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run drill -- crash");
    return 2;
  }
  return drill(values.short);
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
