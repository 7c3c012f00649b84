#!/usr/bin/env node
import { isAccountState, isPlan, MICROS_PER_CREDIT } from '@tollgate/core';
import type { KeyBudgetStatus, KeyInfo, Store } from '@tollgate/billing';
import { type AdminResult, createAdminActions, type GatewayEvent } from '@tollgate/gateway';
import { ConfigError, loadConfig } from './config';
import { openStore } from './open-backends';
import { startServer } from './start-server';
import { createWebhooks } from './webhooks';

const USAGE = `Usage: tollgate <command> [options]

  serve                                         run the gateway (PORT, default 8080)
  accounts create --plan PLAN                   create an account (free, plus, pro, max)
  accounts list [--limit N] [--cursor C]        accounts in creation order, a page at a time
  accounts get ID
  accounts set-state ID STATE                   active, disabled, deleted, under_18
  accounts set-plan ID PLAN
  credits add --account ID --credits N          add N credits (1 credit = $0.01; up to 4 decimals)
        [--idempotency-key K]                   added once per K: running it again adds nothing
  keys create --account ID --name NAME          create a key; prints {"id","name","key"} (the key is shown once)
  keys list --account ID
  keys get KEY_ID
  keys rename KEY_ID NAME
  keys revoke KEY_ID
  keys budget KEY_ID --micros N --period P      a spend limit for the key: N micro-dollars a day, month (UTC) or in total
        (or: keys budget KEY_ID --clear)        remove it; the key is then limited by the balance only
  usage --account ID [--limit N]                ledger entries, newest first

Options: --json for JSON output. Settings come from the environment (docs/configuration.md).`;

/** Thrown for a wrong command line; the message is for people. */
class UsageError extends Error {}

/** The value of an admin action, or its refusal as the CLI's error: a bad value is a usage error (exit 2), an unknown id or a conflict exit 1. */
function done<T>(result: AdminResult<T>): T {
  if (result.ok) return result.value;
  const message = result.error.message.replace(/\.$/, '');
  if (result.error.code === 'invalid_parameter') throw new UsageError(message);
  throw new Error(message);
}

/** Runs the CLI with the given arguments; returns the exit code. */
export async function main(argv: string[], out: (text: string) => void = (text) => process.stdout.write(`${text}\n`)): Promise<number> {
  const { positional, flags } = parseArgs(argv);
  const [command, sub] = positional;
  try {
    if (command === undefined || flags.help === true) {
      out(USAGE);
      return command === undefined && flags.help !== true ? 2 : 0;
    }
    checkFlags(`${command} ${command === 'serve' || command === 'usage' ? '' : (sub ?? '')}`.trim(), flags);
    const config = loadConfig();
    if (command === 'serve') return await serveCommand(config);
    const store = await openStore(config);
    // With webhooks configured, a revoke sends key.revoked as the server would (docs/events.md):
    // the CLI waits up to 10 s for its delivery (with retries) before it exits; failures go to stderr.
    const webhooks =
      config.webhook &&
      createWebhooks({ ...config.webhook, maxAttempts: 4, userAgent: config.version, log: (line) => process.stderr.write(`${JSON.stringify(line)}\n`) });
    try {
      await runAdmin(store, command, sub, positional.slice(2), flags, out, webhooks?.send);
    } finally {
      if (webhooks) {
        for (const end = Date.now() + 10_000; webhooks.pending > 0 && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 20));
        await webhooks.close(0);
      }
      await store.close();
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      process.stderr.write(`tollgate: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`tollgate: ${(error as Error).message}\n`);
    return 1;
  }
}

async function serveCommand(config: ReturnType<typeof loadConfig>): Promise<number> {
  const running = await startServer(config);
  if (running.demoKey) {
    process.stderr.write(
      `\n  Demo account created with $5.00 of credits. Its API key, shown only this once:\n\n    ${running.demoKey}\n\n` +
        `  Try: curl -H "Authorization: Bearer ${running.demoKey}" ${running.url}/v1/models\n\n`,
    );
  }
  const stop = () => {
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // A second signal while stopping (Ctrl-C under npm delivers two) does not cut the shutdown short:
  // the grace period bounds it, and it settles every request in flight.
  let stopping = false;
  const once = () => {
    if (stopping) return;
    stopping = true;
    stop();
  };
  process.on('SIGINT', once);
  process.on('SIGTERM', once);
  return await new Promise<number>(() => {});
}

async function runAdmin(
  store: Store,
  command: string,
  sub: string | undefined,
  args: string[],
  flags: Flags,
  out: (text: string) => void,
  onEvent?: (event: GatewayEvent) => void,
): Promise<void> {
  const actions = createAdminActions(store, onEvent ? { onEvent } : {});
  const json = flags.json === true;
  const need = (name: string): string => {
    const value = flags[name];
    if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required (see tollgate --help)`);
    return value;
  };
  const optional = (name: string): string | undefined => (flags[name] === undefined ? undefined : need(name));
  const arg = (index: number, name: string): string => {
    const value = args[index];
    if (value === undefined) throw new UsageError(`${name} is required (see tollgate --help)`);
    return value;
  };
  const show = (value: unknown, table: () => string) => out(json ? JSON.stringify(value, null, 2) : table());
  const keyTable = (keys: KeyInfo[]) =>
    table(
      ['id', 'name', 'prefix', 'created', 'revoked', 'budget'],
      keys.map((key) => [
        key.id,
        key.name,
        `${key.prefix}…`,
        new Date(key.createdAt).toISOString(),
        key.revokedAt ? new Date(key.revokedAt).toISOString() : '',
        key.budget ? formatBudget(key.budget) : '',
      ]),
    );
  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'accounts create': {
      const plan = flags.plan === undefined ? 'free' : need('plan');
      if (!isPlan(plan)) throw new UsageError(`--plan must be free, plus, pro or max, not "${plan}"`);
      const account = done(await actions.createAccount({ plan }));
      return show(account, () => `created account ${account.id} (plan ${account.plan}, ${account.state})`);
    }
    case 'accounts list': {
      const limit = optional('limit');
      const cursor = optional('cursor');
      if (limit !== undefined && !/^\d+$/.test(limit)) throw new UsageError('--limit must be a whole number from 1 to 1000');
      const page = done(await actions.listAccounts({ ...(limit !== undefined ? { limit: Number(limit) } : {}), ...(cursor !== undefined ? { cursor } : {}) }));
      return show(
        { data: page.items, next_cursor: page.next ?? null },
        () =>
          table(
            ['id', 'plan', 'state'],
            page.items.map((account) => [account.id, account.plan, account.state]),
          ) + (page.next ? `\nmore: tollgate accounts list --cursor ${page.next}` : ''),
      );
    }
    case 'accounts get': {
      const account = done(await actions.getAccount(arg(0, 'ID')));
      return show(account, () => `account ${account.id}: plan ${account.plan}, ${account.state}`);
    }
    case 'accounts set-state': {
      const id = arg(0, 'ID');
      const state = arg(1, 'STATE');
      if (!isAccountState(state)) throw new UsageError(`STATE must be active, disabled, deleted or under_18, not "${state}"`);
      const account = done(await actions.setAccountState(id, state));
      return show(account, () => `account ${account.id} is now ${account.state}`);
    }
    case 'accounts set-plan': {
      const id = arg(0, 'ID');
      const plan = arg(1, 'PLAN');
      if (!isPlan(plan)) throw new UsageError(`PLAN must be free, plus, pro or max, not "${plan}"`);
      const account = done(await actions.setPlan(id, plan));
      return show(account, () => `account ${account.id} is now on ${account.plan}`);
    }
    case 'credits add': {
      const account = need('account');
      const micros = creditsToMicros(need('credits'));
      const idempotencyKey = optional('idempotency-key');
      const credited = done(await actions.addCredits(account, { micros, note: 'cli', ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) }));
      const { balance, replayed } = credited;
      const extra = idempotencyKey === undefined ? {} : { replayed, entryId: credited.entry?.id };
      return show({ accountId: account, added: replayed ? 0 : micros, ...balance, ...extra }, () =>
        replayed
          ? `already added under idempotency key ${idempotencyKey}: nothing added; balance ${formatMicros(balance.balance)}, available ${formatMicros(balance.available)}`
          : `added ${formatMicros(micros)} to ${account}: balance ${formatMicros(balance.balance)}, available ${formatMicros(balance.available)}`,
      );
    }
    case 'keys create': {
      const created = done(await actions.createKey(need('account'), need('name')));
      return out(JSON.stringify({ id: created.key.id, name: created.key.name, key: created.secret }));
    }
    case 'keys list': {
      const keys = done(await actions.listKeys(need('account')));
      return show(keys, () => keyTable(keys));
    }
    case 'keys get': {
      const key = done(await actions.getKey(arg(0, 'KEY_ID')));
      return show(key, () => keyTable([key]));
    }
    case 'keys rename': {
      const key = done(await actions.renameKey(arg(0, 'KEY_ID'), arg(1, 'NAME')));
      return show(key, () => `key ${key.id} is now named ${key.name}`);
    }
    case 'keys revoke': {
      const id = arg(0, 'KEY_ID');
      done(await actions.revokeKey(id));
      return show({ id, revoked: true }, () => `revoked key ${id}`);
    }
    case 'keys budget': {
      const id = arg(0, 'KEY_ID');
      let budget: { micros: number; period: string } | null = null;
      if (flags.clear === true) {
        if (flags.micros !== undefined || flags.period !== undefined) throw new UsageError('--clear takes neither --micros nor --period');
      } else {
        const micros = need('micros');
        if (!/^\d{1,16}$/.test(micros)) throw new UsageError(`--micros must be a whole number of micro-dollars, not "${micros}"`);
        budget = { micros: Number(micros), period: need('period') };
      }
      const key = done(await actions.setKeyBudget(id, budget));
      return show(key, () =>
        key.budget ? `key ${key.id} may spend ${formatBudget(key.budget)}` : `key ${key.id} has no budget: the balance is its only limit`,
      );
    }
    case 'usage': {
      const account = need('account');
      const limit = flags.limit === undefined ? 50 : Number(need('limit'));
      if (!Number.isSafeInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
      const { balance, entries } = done(await actions.recentEntries(account, limit));
      return show(
        { accountId: account, ...balance, entries },
        () =>
          `balance ${formatMicros(balance.balance)}, held ${formatMicros(balance.held)}, available ${formatMicros(balance.available)}\n` +
          table(
            ['time', 'kind', 'amount', 'request', 'details'],
            entries.map((entry) => [
              new Date(entry.createdAt).toISOString(),
              entry.kind,
              formatMicros(entry.micros),
              entry.requestId ?? '',
              entry.meta ? JSON.stringify(entry.meta) : '',
            ]),
          ),
      );
    }
    default:
      throw new UsageError(`unknown command "${[command, sub].filter(Boolean).join(' ')}" (see tollgate --help)`);
  }
}

/** Credits as written ("12", "0.5", up to 4 decimals) to integer micro-dollars, without floating point. */
export function creditsToMicros(text: string): number {
  const match = /^(\d{1,12})(?:\.(\d{1,4}))?$/.exec(text);
  if (!match) throw new UsageError(`--credits must be a positive number of credits with at most 4 decimals, not "${text}"`);
  const micros = Number(match[1]) * MICROS_PER_CREDIT + Number((match[2] ?? '').padEnd(4, '0'));
  if (micros <= 0) throw new UsageError('--credits must be more than 0');
  return micros;
}

/** A key budget for people: `$5.000000 a day (spent $0.001200 since 2026-11-26T00:00:00.000Z)`. */
export function formatBudget(budget: KeyBudgetStatus): string {
  const per = budget.period === 'total' ? 'in total' : `a ${budget.period}`;
  const since = budget.period === 'total' ? '' : ` since ${new Date(budget.periodStart).toISOString()}`;
  return `${formatMicros(budget.micros)} ${per} (spent ${formatMicros(budget.spent)}${since})`;
}

/** Micro-dollars as dollars for people: -$0.000123 style, exact. */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const absolute = Math.abs(micros);
  return `${sign}$${Math.floor(absolute / 1_000_000)}.${String(absolute % 1_000_000).padStart(6, '0')}`;
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

type Flags = Record<string, string | true>;

/** The options each command reads (`--json` and `--help` go with all): any other is a usage error, not a silent no-op. */
const COMMAND_FLAGS: Record<string, readonly string[]> = {
  serve: [],
  'accounts create': ['plan'],
  'accounts list': ['limit', 'cursor'],
  'accounts get': [],
  'accounts set-state': [],
  'accounts set-plan': [],
  'credits add': ['account', 'credits', 'idempotency-key'],
  'keys create': ['account', 'name'],
  'keys list': ['account'],
  'keys get': [],
  'keys rename': [],
  'keys revoke': [],
  'keys budget': ['micros', 'period', 'clear'],
  usage: ['account', 'limit'],
};

/** Refuses an option the command does not read (a misspelt `--idempotency_key` must not credit twice). Unknown commands are left to their own message. */
function checkFlags(command: string, flags: Flags): void {
  const known = COMMAND_FLAGS[command];
  if (known === undefined) return;
  for (const name of Object.keys(flags)) {
    if (name !== 'json' && name !== 'help' && !known.includes(name)) throw new UsageError(`unknown option --${name} for "${command}" (see tollgate --help)`);
  }
}

function parseArgs(argv: string[]): { positional: string[]; flags: Flags } {
  const positional: string[] = [];
  const flags: Flags = {};
  for (let index = 0; index < argv.length; index++) {
    const token = argv[index] ?? '';
    if (token === '-h') flags.help = true;
    else if (token.startsWith('--')) {
      // `--name=value`: the value is everything after the first `=` (a key such as `order=1` kept whole).
      const equals = token.indexOf('=');
      const name = equals < 0 ? token.slice(2) : token.slice(2, equals);
      const inline = equals < 0 ? undefined : token.slice(equals + 1);
      if (inline !== undefined) flags[name] = inline;
      else if (name === 'json' || name === 'help') flags[name] = true;
      else {
        const next = argv[index + 1];
        if (next === undefined || next.startsWith('--')) flags[name] = true;
        else {
          flags[name] = next;
          index++;
        }
      }
    } else positional.push(token);
  }
  return { positional, flags };
}

const invokedDirectly = process.argv[1] !== undefined && /cli\.(ts|js)$/.test(process.argv[1]);
if (invokedDirectly) {
  main(process.argv.slice(2)).then((code) => {
    if (code !== 0) process.exit(code);
  });
}
