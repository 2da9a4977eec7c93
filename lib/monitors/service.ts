import { eq, inArray, sql } from "drizzle-orm";
import { chainFor } from "@/lib/chain/registry";
import { callOf, selectFunction } from "@/lib/contracts/arguments";
import { getContract, type ContractRow } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { contracts, developerAccounts, eventDefinitions } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { getDeveloperAccount } from "@/lib/developer-accounts/service";
import { badRequest, notFound, referenced, type ErrorDetails } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { isBalanceTopic, type EventRow } from "./present";
import type { CreateEventInput, ListEventsInput } from "./schema";

type Field = "contract" | "functionName" | "functionArgs" | "developerAccount" | "chainId" | "threshold" | "numberOfBlocks";

/** What each topic takes besides name and topic; `true` when required. Every other field is refused for it. */
const FIELDS: Record<string, Partial<Record<Field, boolean>>> = {
  "balance.contract": { contract: true, functionName: true, functionArgs: false, chainId: false, threshold: true, numberOfBlocks: false },
  "balance.dev_account": { developerAccount: true, chainId: true, threshold: true, numberOfBlocks: false },
  // The project's own available sponsorship balance: on one chain, or (without chainId) on every chain of the mode.
  "balance.project": { chainId: false, threshold: true, numberOfBlocks: false },
};

const ALL_FIELDS: Field[] = ["contract", "functionName", "functionArgs", "developerAccount", "chainId", "threshold", "numberOfBlocks"];

/** Every field the topic does not use, and every one it requires but lacks, in one 400. */
function checkFields(input: CreateEventInput) {
  const allowed = FIELDS[input.topic] ?? {};
  const details: ErrorDetails = {};
  for (const field of ALL_FIELDS) {
    const given = input[field] !== undefined;
    if (given && !(field in allowed)) details[field] = { value: input[field], message: `Not used by topic ${input.topic}.` };
    else if (!given && allowed[field]) details[field] = { message: `Required for topic ${input.topic}.` };
  }
  const names = Object.keys(details);
  if (names.length) {
    const summary = names.length === 1 ? `${names[0]}: ${details[names[0]!]!.message}` : `Invalid parameters for topic ${input.topic}: ${names.join(", ")}`;
    throw badRequest(summary, details);
  }
}

const isInteger = (type: string) => /^u?int\d*$/.test(type);

/**
 * The call a balance.contract definition makes: its function, chosen in the contract's stored ABI,
 * must be a view returning exactly one integer; the arguments (ids resolved to addresses on the
 * contract's chain) must fit it. 400s name the field at fault.
 */
export async function contractCall(db: Queryable, ctx: ProjectContext, contract: ContractRow, functionName: string, rawArgs: string[]) {
  const fn = selectFunction(contract.abi, functionName, rawArgs.length);
  const refuse = (why: string) => badRequest(`${fn.name} cannot be monitored: ${why}.`, { functionName: { value: functionName, message: why } });
  if (fn.stateMutability !== "view" && fn.stateMutability !== "pure") throw refuse(`it is a ${fn.stateMutability} function, not a view`);
  if (fn.outputs.length !== 1 || !isInteger(fn.outputs[0]!.type)) {
    throw refuse(`it returns ${fn.outputs.length ? `(${fn.outputs.map((o) => o.type).join(", ")})` : "nothing"}, not exactly one integer`);
  }
  return callOf(db, ctx, contract.chainId, fn, rawArgs);
}

/** The monitored object named by the request, checked to belong to this project and mode (400 naming the field otherwise). */
async function watched(db: Queryable, ctx: ProjectContext, input: CreateEventInput) {
  if (input.topic === "balance.contract") {
    const contract = await referenced(getContract(db, ctx, input.contract!), "contract", input.contract!);
    if (contract.deleted) throw badRequest(`Contract ${contract.id} is deleted.`, { contract: { value: contract.id, message: "deleted" } });
    if (input.chainId !== undefined && input.chainId !== contract.chainId) {
      throw badRequest(`Contract ${contract.id} is on chain ${contract.chainId}, not ${input.chainId}.`, {
        chainId: { value: input.chainId, message: `the contract is on chain ${contract.chainId}` },
      });
    }
    chainFor(ctx, contract.chainId);
    await contractCall(db, ctx, contract, input.functionName!, input.functionArgs ?? []);
    return { chainId: contract.chainId, contractId: contract.id, functionName: input.functionName!, functionArgs: input.functionArgs ?? [] };
  }
  if (input.topic === "balance.dev_account") {
    const account = await referenced(getDeveloperAccount(db, ctx, input.developerAccount!), "developerAccount", input.developerAccount!);
    if (account.deleted) throw badRequest(`Developer account ${account.id} is deleted.`, { developerAccount: { value: account.id, message: "deleted" } });
    chainFor(ctx, input.chainId!);
    return { chainId: input.chainId!, developerAccountId: account.id };
  }
  if (input.topic === "balance.project") {
    if (input.chainId !== undefined) chainFor(ctx, input.chainId);
    return { chainId: input.chainId ?? null };
  }
  return {};
}

export async function createEvent(db: Queryable, ctx: ProjectContext, input: CreateEventInput): Promise<EventRow> {
  checkFields(input);
  const target = await watched(db, ctx, input);
  const [row] = await db
    .insert(eventDefinitions)
    .values({
      id: newId("event"),
      ...ctx,
      name: input.name,
      topic: input.topic,
      ...target,
      threshold: isBalanceTopic(input.topic) ? input.threshold! : null,
      numberOfBlocks: input.numberOfBlocks ?? 0,
    })
    .returning();
  return row!;
}

/** Deleted definitions stay readable by id (with `deleted: true`), as contracts do. */
export async function getEvent(db: Queryable, ctx: ProjectContext, id: string): Promise<EventRow> {
  const [row] = await db.select().from(eventDefinitions).where(inScope(eventDefinitions, ctx, eq(eventDefinitions.id, id)));
  if (!row) throw notFound("event", id);
  return row;
}

export async function listEvents(db: Queryable, ctx: ProjectContext, input: ListEventsInput) {
  const where = inScope(
    eventDefinitions,
    ctx,
    eq(eventDefinitions.deleted, input.deleted ?? false),
    input.name !== undefined ? eq(eventDefinitions.name, input.name) : undefined,
  );
  return listPage(db, eventDefinitions, where, input);
}

/** Soft delete: the monitor stops; deleting again answers the same, as contracts do. */
export async function deleteEvent(db: Queryable, ctx: ProjectContext, id: string) {
  const deleted = await db
    .update(eventDefinitions)
    .set({ deleted: true, updatedAt: sql`now()` })
    .where(inScope(eventDefinitions, ctx, eq(eventDefinitions.id, id)))
    .returning({ id: eventDefinitions.id });
  if (deleted.length === 0) throw notFound("event", id);
  return { id, object: "event" as const, deleted: true as const };
}

/** What the dashboard shows each definition watching: the contracts' and developer accounts' names and addresses, by id. */
export async function watchedObjects(db: Queryable, ctx: ProjectContext, events: { contract: { id: string } | null; developerAccount: { id: string } | null }[]) {
  const contractIds = [...new Set(events.flatMap((e) => (e.contract ? [e.contract.id] : [])))];
  const accountIds = [...new Set(events.flatMap((e) => (e.developerAccount ? [e.developerAccount.id] : [])))];
  const [contractRows, accountRows] = await Promise.all([
    contractIds.length ? db.select().from(contracts).where(inScope(contracts, ctx, inArray(contracts.id, contractIds))) : [],
    accountIds.length ? db.select().from(developerAccounts).where(inScope(developerAccounts, ctx, inArray(developerAccounts.id, accountIds))) : [],
  ]);
  return {
    contracts: new Map(contractRows.map((c) => [c.id, { name: c.name, address: c.address, deleted: c.deleted }])),
    developerAccounts: new Map(accountRows.map((a) => [a.id, { name: a.name, address: a.address, deleted: a.deleted }])),
  };
}
