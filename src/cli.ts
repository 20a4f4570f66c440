/**
 * model-gateway CLI: `serve`, `migrate`, `keys create|list|disable`, `members add|list|remove`, `credits add|show`.
 * Administrative commands work directly on the configured database (same GATEWAY_DATABASE_URL as the server).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, type GatewayConfig } from './config.js';
import cluster from 'node:cluster';
import { bootstrap, createGateway, createLogger } from './gateway.js';
import { applyHeapGrowth } from './services/heap-growth.js';
import { runPrimary } from './cluster.js';
import { openStore } from './store/sql-store.js';
import { KeyService } from './services/keys.js';
import { MemberService } from './services/members.js';
import { WorkspaceService } from './services/workspaces.js';
import { CreditService } from './services/spend/credits.js';
import { LocalBus } from './services/invalidation.js';
import { HttpError } from './core/errors.js';
import { parseInterval } from './core/rate-limits.js';
import type { MemberRole } from './store/types.js';

interface Command {
  usage: string;
  help: string;
  options?: ParseArgsConfig['options'];
  run(config: GatewayConfig, values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<void>;
}

const out = (s: string) => process.stdout.write(`${s}\n`);

async function withStore<T>(config: GatewayConfig, fn: (ctx: { keys: KeyService; members: MemberService; workspaces: WorkspaceService; credits: CreditService }) => Promise<T>): Promise<T> {
  const store = openStore(config.databaseUrl);
  try {
    await store.migrate(config.migrate === 'off' ? 'check' : 'apply');
    const secret = await bootstrap(store, config);
    if (secret && !config.adminKey) out(`First start: created the organization. Management key (shown once):\n  ${secret}`);
    // The CLI has no key cache worth keeping; a TTL of 0 always reads the database.
    const credits = new CreditService({ store, recorder: { unflushedSpend: new Map() }, enabled: config.spend.credits });
    return await fn({ keys: new KeyService(store, new LocalBus(), 0), members: new MemberService(store), workspaces: new WorkspaceService(store), credits });
  } finally {
    await store.close();
  }
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'serve',
    help: 'Run the gateway (PORT, HOST, GATEWAY_DATABASE_URL, GATEWAY_CONFIG, … from the environment). SIGTERM/SIGINT stop it gracefully.',
    async run(config) {
      // GATEWAY_WORKERS > 1: this process is the primary of N workers sharing the port (src/cluster.ts).
      if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, createLogger(config), out);
      // V8's old-generation growth (services/heap-growth.ts): set before the gateway loads, in each worker too.
      const heapGrowth = applyHeapGrowth(config.heapGrowingPercent);
      const gw = await createGateway(config);
      if (gw.bootstrapSecret) out(`\nFirst start: your management key (shown once, store it now):\n\n  ${gw.bootstrapSecret}\n`);
      const address = await gw.listen();
      gw.app.log.info({ address, heap_growth: heapGrowth }, 'gateway listening');
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        gw.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
        gw.close().then(
          () => process.exit(0),
          (err) => {
            gw.app.log.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
      // A worker whose primary is gone stops too (nobody would restart or stop it).
      if (cluster.isWorker) process.on('disconnect', () => stop('primary gone'));
    },
  },
  migrate: {
    usage: 'migrate',
    help: 'Apply pending database migrations and exit (whatever GATEWAY_MIGRATE says; safe to run from several places at once).',
    async run(config) {
      const store = openStore(config.databaseUrl);
      try {
        const applied = await store.migrate();
        out(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
      } finally {
        await store.close();
      }
    },
  },
  'keys create': {
    usage: 'keys create --name <name> [--management] [--limit <usd>] [--limit-reset daily|weekly|monthly] [--rate-limit <requests>/<interval>] [--workspace <id|slug>] [--expires-at <iso>]',
    help: 'Create a key and print its secret (shown once).',
    options: {
      name: { type: 'string' },
      management: { type: 'boolean' },
      limit: { type: 'string' },
      'limit-reset': { type: 'string' },
      'rate-limit': { type: 'string' },
      workspace: { type: 'string' },
      'expires-at': { type: 'string' },
    },
    async run(config, v) {
      if (!v.name) throw new Error('--name is required');
      const limit = v.limit === undefined ? null : Number(v.limit);
      if (limit !== null && (!Number.isFinite(limit) || limit < 0)) throw new Error('--limit must be a non-negative number of USD');
      const reset = (v['limit-reset'] as string | undefined) ?? null;
      if (reset !== null && !['daily', 'weekly', 'monthly'].includes(reset)) throw new Error('--limit-reset must be daily, weekly or monthly');
      const expires = v['expires-at'] as string | undefined;
      if (expires !== undefined && Number.isNaN(Date.parse(expires))) throw new Error('--expires-at must be an ISO 8601 timestamp');
      const rate = v['rate-limit'] === undefined ? null : /^([1-9][0-9]{0,8})\/(.+)$/.exec(String(v['rate-limit']));
      const rateInterval = rate ? parseInterval(rate[2]) : null;
      if (v['rate-limit'] !== undefined && (!rate || rateInterval === null)) throw new Error('--rate-limit must be <requests>/<interval>, e.g. 100/1m (interval: a number and s, m, h or d; at most 30d)');
      await withStore(config, async ({ keys, workspaces }) => {
        const ws = await workspaces.resolve(v.workspace as string | undefined);
        const { row, secret } = await keys.create({
          name: String(v.name),
          kind: v.management ? 'management' : 'inference',
          limit,
          limit_reset: reset as 'daily' | null,
          expires_at: expires ? new Date(expires).toISOString() : null,
          workspace_id: ws.id,
          creator_user_id: null,
          rate_limit: rate && rateInterval !== null ? { requests: Number(rate[1]), interval_s: rateInterval, tokens_per_minute: null } : null,
        });
        out(`Created ${row.kind} key "${row.name}" (hash ${row.hash}) in workspace ${ws.slug}.\nSecret (shown once):\n  ${secret}`);
      });
    },
  },
  'keys list': {
    usage: 'keys list [--workspace <id|slug>] [--include-disabled]',
    help: 'List keys of a workspace (default workspace when omitted).',
    options: { workspace: { type: 'string' }, 'include-disabled': { type: 'boolean' } },
    async run(config, v) {
      await withStore(config, async ({ keys, workspaces }) => {
        const ws = await workspaces.resolve(v.workspace as string | undefined);
        for (let offset = 0; ; offset += 100) {
          const rows = await keys.list({ workspace_id: ws.id, include_disabled: Boolean(v['include-disabled']), offset, limit: 100 });
          for (const r of rows) out(`${r.hash}  ${r.kind.padEnd(10)}  ${r.disabled ? 'disabled' : 'active  '}  ${r.label}  ${r.name}`);
          if (rows.length < 100) break;
        }
      });
    },
  },
  'keys disable': {
    usage: 'keys disable <hash>',
    help: 'Disable a key (refused for the last active management key).',
    async run(config, _v, pos) {
      if (!pos[0]) throw new Error('the key hash is required');
      await withStore(config, async ({ keys }) => {
        const row = await keys.update(pos[0], { disabled: true });
        out(`Disabled key ${row.hash} (${row.name}).`);
      });
    },
  },
  'members add': {
    usage: 'members add --email <email> [--first-name <n>] [--last-name <n>] [--role org:admin|org:member]',
    help: 'Add a member to the organization.',
    options: { email: { type: 'string' }, 'first-name': { type: 'string' }, 'last-name': { type: 'string' }, role: { type: 'string' } },
    async run(config, v) {
      if (!v.email || !/^[^\s@]+@[^\s@]+$/.test(String(v.email))) throw new Error('--email must be an email address');
      const role = (v.role as string | undefined) ?? 'org:member';
      if (!['org:admin', 'org:member'].includes(role)) throw new Error('--role must be org:admin or org:member');
      await withStore(config, async ({ members }) => {
        const m = await members.add({ email: String(v.email), first_name: v['first-name'] as string, last_name: v['last-name'] as string, role: role as MemberRole });
        out(`Added member ${m.id} <${m.email}> (${m.role}).`);
      });
    },
  },
  'members list': {
    usage: 'members list',
    help: 'List organization members, oldest first.',
    async run(config) {
      await withStore(config, async ({ members }) => {
        for (let offset = 0; ; offset += 100) {
          const page = await members.list(offset, 100);
          for (const m of page.rows) out(`${m.id}  ${m.role.padEnd(10)}  ${m.email}  ${[m.first_name, m.last_name].filter(Boolean).join(' ')}`);
          if (offset + 100 >= page.total) break;
        }
      });
    },
  },
  'members remove': {
    usage: 'members remove <member-id>',
    help: 'Remove a member (refused for the last admin and for members who own active keys).',
    async run(config, _v, pos) {
      if (!pos[0]) throw new Error('the member id is required');
      await withStore(config, async ({ members }) => {
        await members.remove(pos[0]);
        out(`Removed member ${pos[0]}.`);
      });
    },
  },
  'credits add': {
    usage: 'credits add <usd> [--adjustment] [--note <text>]',
    help: "Add credits to the organization's balance (a top-up), or with --adjustment correct it by any non-zero amount (negative takes credits away). Every change is a ledger row (docs/spend.md).",
    options: { adjustment: { type: 'boolean' }, note: { type: 'string' } },
    async run(config, v, pos) {
      const amount = pos[0] === undefined || !/^-?(\d+(\.\d*)?|\.\d+)$/.test(pos[0]) ? NaN : Number(pos[0]);
      if (!Number.isFinite(amount)) throw new Error('the amount in USD is required, e.g. `credits add 25` or `credits add -- -5 --adjustment`');
      await withStore(config, async ({ credits }) => {
        const e = await credits.add({ amount_usd: amount, kind: v.adjustment ? 'adjustment' : 'top_up', note: (v.note as string | undefined) ?? null }, 'cli');
        const b = await credits.balance();
        out(`Recorded ${e.kind} ${e.id}: ${e.amount_usd} USD. Total credits ${b.total_credits} USD, used ${b.total_usage} USD.`);
      });
    },
  },
  'credits show': {
    usage: 'credits show',
    help: 'Print the balance (total credits, total usage) and the ledger, newest first.',
    async run(config) {
      await withStore(config, async ({ credits }) => {
        const b = await credits.balance();
        out(`Total credits ${b.total_credits} USD, used ${b.total_usage} USD${config.spend.credits ? '' : ' (not enforced: GATEWAY_CREDITS is off)'}.`);
        for (let offset = 0; ; offset += 100) {
          const page = await credits.list(offset, 100);
          for (const e of page.rows) out(`${e.created_at}  ${e.kind.padEnd(10)}  ${String(e.amount_usd).padStart(14)}  ${e.created_by ?? ''}  ${e.note ?? ''}`.trimEnd());
          if (offset + 100 >= page.total) break;
        }
      });
    },
  },
};

function usage(): string {
  return [
    'Usage: model-gateway <command> [options]',
    '',
    'Commands:',
    ...Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.help}`),
    '',
    'Every command takes --help. Configuration comes from the environment and GATEWAY_CONFIG (see README).',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [a, b] = argv;
  const name = a && COMMANDS[`${a} ${b}`] ? `${a} ${b}` : a;
  const cmd = name ? COMMANDS[name] : undefined;
  if (!cmd) {
    if (a && a !== '--help' && a !== '-h' && a !== 'help') process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n`);
    out(usage());
    return a && a !== '--help' && a !== '-h' && a !== 'help' ? 2 : 0;
  }
  const rest = argv.slice(name!.split(' ').length);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...(cmd.options ?? {}), help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\nUsage: model-gateway ${cmd.usage}\n`);
    return 2;
  }
  if (parsed.values.help) {
    out(`Usage: model-gateway ${cmd.usage}\n\n${cmd.help}`);
    return 0;
  }
  let config: GatewayConfig;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  try {
    await cmd.run(config, parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
    return 0;
  } catch (err) {
    const msg = err instanceof HttpError ? `${err.message} (${err.status})` : (err as Error).message;
    process.stderr.write(`Error: ${msg}\n`);
    return 1;
  }
}
