import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli.js';
import { hashSecret } from '../../src/core/keys.js';
import { openStore } from '../../src/store/sql-store.js';
import { newWorkspace } from '../../src/services/workspaces.js';

const SAVED_ENV = { ...process.env };
const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
const dbPath = join(dir, 'cli.db');
const DB_URL = `sqlite:${dbPath}`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(...argv: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

function setEnv(extra: Record<string, string> = {}) {
  for (const k of Object.keys(process.env)) if (k.startsWith('GATEWAY_') || k === 'PORT' || k === 'HOST' || k === 'LOG_LEVEL') delete process.env[k];
  Object.assign(process.env, { GATEWAY_DATABASE_URL: DB_URL, GATEWAY_LOG_LEVEL: 'silent', ...extra });
}

const SECRET = /sk-gw-v1-[0-9a-f]{64}/;
const COMMANDS: Array<[string[], string]> = [
  [['serve'], 'serve'],
  [['migrate'], 'migrate'],
  [['keys', 'create'], 'keys create --name <name>'],
  [['keys', 'list'], 'keys list'],
  [['keys', 'disable'], 'keys disable <hash>'],
  [['members', 'add'], 'members add --email <email>'],
  [['members', 'list'], 'members list'],
  [['members', 'remove'], 'members remove <member-id>'],
  [['credits', 'add'], 'credits add <usd>'],
  [['credits', 'show'], 'credits show'],
];

describe('CLI', () => {
  beforeEach(() => setEnv());
  afterEach(() => {
    process.env = { ...SAVED_ENV };
  });
  beforeAll(() => setEnv());
  afterAll(() => {
    process.env = { ...SAVED_ENV };
    rmSync(dir, { recursive: true, force: true });
  });

  describe('help and usage errors (no database is touched)', () => {
    it('--help, -h and help print the usage with every command; exit 0', async () => {
      for (const argv of [['--help'], ['-h'], ['help'], []]) {
        const r = await run(...argv);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain('Usage: model-gateway <command> [options]');
        for (const [, usage] of COMMANDS) expect(r.stdout).toContain(usage.split(' <')[0].split(' [')[0]);
        expect(r.stderr).toBe('');
      }
    });

    it.each(COMMANDS)('%j --help prints its usage; exit 0', async (cmd, usage) => {
      for (const flag of ['--help', '-h']) {
        const r = await run(...cmd, flag);
        expect(r.code).toBe(0);
        expect(r.stdout.startsWith(`Usage: model-gateway ${usage}`)).toBe(true);
        expect(r.stdout.split('\n').length).toBeGreaterThan(2);
      }
      expect(existsSync(dbPath)).toBe(false);
    });

    it('an unknown command exits 2 and prints the usage', async () => {
      for (const argv of [['frobnicate'], ['keys'], ['keys', 'frobnicate'], ['members', 'purge']]) {
        const r = await run(...argv);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`Unknown command: ${argv.join(' ')}`);
        expect(r.stdout).toContain('Usage: model-gateway');
      }
      expect(existsSync(dbPath)).toBe(false);
    });

    it('an unknown option exits 2 with the command usage', async () => {
      const r = await run('keys', 'list', '--bogus');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('bogus');
      expect(r.stderr).toContain('Usage: model-gateway keys list');
    });

    it('a configuration mistake exits 2 naming the setting', async () => {
      setEnv({ PORT: 'abc', GATEWAY_DATABASE_URL: 'mysql://x' });
      const r = await run('keys', 'list');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Invalid configuration');
      expect(r.stderr).toContain('PORT');
      expect(r.stderr).toContain('GATEWAY_DATABASE_URL');
    });
  });

  describe('against a database (temp SQLite file)', () => {
    let bootstrapSecret: string;

    it('migrate applies the migrations, then reports the database up to date', async () => {
      const first = await run('migrate');
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^Applied: 0001_init/);
      expect(existsSync(dbPath)).toBe(true);
      const second = await run('migrate');
      expect(second.code).toBe(0);
      expect(second.stdout.trim()).toBe('Database is up to date.');
    });

    it('the first administrative command bootstraps the organization and prints the management key once', async () => {
      const r = await run('keys', 'list');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('First start');
      bootstrapSecret = SECRET.exec(r.stdout)![0];
      const hash = hashSecret(bootstrapSecret);
      // The listing shows the key by hash and masked label, never the secret.
      const lines = r.stdout.split('\n').filter((l) => l.startsWith(hash));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('management');
      expect(lines[0]).not.toContain(bootstrapSecret);

      const again = await run('keys', 'list');
      expect(again.code).toBe(0);
      expect(again.stdout).not.toContain('First start');
      expect(again.stdout).not.toMatch(SECRET);
      expect(again.stdout).toContain(hash);
    });

    it('keys create prints a secret once and keys list shows the key', async () => {
      const r = await run('keys', 'create', '--name', 'ci runner');
      expect(r.code).toBe(0);
      const secret = SECRET.exec(r.stdout)![0];
      const hash = hashSecret(secret);
      expect(r.stdout).toContain(`Created inference key "ci runner" (hash ${hash}) in workspace default`);

      const list = await run('keys', 'list');
      expect(list.code).toBe(0);
      const line = list.stdout.split('\n').find((l) => l.startsWith(hash));
      expect(line).toBeDefined();
      expect(line).toMatch(/inference\s+active\s+sk-gw-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{4}\s+ci runner$/);
      expect(list.stdout).not.toContain(secret);

      const store = openStore(DB_URL);
      try {
        const row = await store.getKey(hash);
        expect(row).toMatchObject({ name: 'ci runner', kind: 'inference', disabled: false, limit: null, creator_user_id: null });
      } finally {
        await store.close();
      }
    });

    it('keys create takes --management, --limit, --limit-reset, --expires-at and --workspace', async () => {
      const store = openStore(DB_URL);
      try {
        await store.insertWorkspace(newWorkspace({ name: 'Team', slug: 'team' }, 'cli-test', new Date().toISOString()));
      } finally {
        await store.close();
      }
      const r = await run('keys', 'create', '--name', 'ops', '--management', '--limit', '12.5', '--limit-reset', 'weekly', '--rate-limit', '120/1m', '--expires-at', '2099-01-01T00:00:00Z', '--workspace', 'team');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Created management key "ops"');
      expect(r.stdout).toContain('in workspace team');
      const hash = hashSecret(SECRET.exec(r.stdout)![0]);

      const inTeam = await run('keys', 'list', '--workspace', 'team');
      expect(inTeam.stdout).toContain(hash);
      expect((await run('keys', 'list')).stdout).not.toContain(hash);

      const s = openStore(DB_URL);
      try {
        expect(await s.getKey(hash)).toMatchObject({ kind: 'management', limit: 12.5, limit_reset: 'weekly', expires_at: '2099-01-01T00:00:00.000Z', rate_limit_requests: 120, rate_limit_interval_s: 60 });
      } finally {
        await s.close();
      }
    });

    it('keys create rejects bad options with exit 1', async () => {
      const cases: Array<[string[], RegExp]> = [
        [[], /--name is required/],
        [['--name', 'x', '--limit=-3'], /--limit must be a non-negative/],
        [['--name', 'x', '--limit', 'ten'], /--limit/],
        [['--name', 'x', '--limit-reset', 'yearly'], /--limit-reset/],
        [['--name', 'x', '--expires-at', 'someday'], /--expires-at/],
        [['--name', 'x', '--rate-limit', '100'], /--rate-limit must be <requests>\/<interval>/],
        [['--name', 'x', '--rate-limit', '100/1w'], /--rate-limit/],
        [['--name', 'x', '--rate-limit', '0/1m'], /--rate-limit/],
        [['--name', 'x', '--expires-at', '2001-01-01T00:00:00Z'], /expires_at must be in the future/],
        [['--name', 'x', '--workspace', 'missing'], /not found \(404\)/],
      ];
      for (const [args, message] of cases) {
        const r = await run('keys', 'create', ...args);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr).toMatch(/^Error: /);
        expect(r.stderr).toMatch(message);
        expect(r.stdout).not.toMatch(SECRET);
      }
    });

    it('keys disable disables a key; listings hide it unless --include-disabled', async () => {
      const created = await run('keys', 'create', '--name', 'to disable');
      const hash = hashSecret(SECRET.exec(created.stdout)![0]);
      const r = await run('keys', 'disable', hash);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Disabled key ${hash} (to disable).`);
      expect((await run('keys', 'list')).stdout).not.toContain(hash);
      const all = await run('keys', 'list', '--include-disabled');
      const line = all.stdout.split('\n').find((l) => l.startsWith(hash));
      expect(line).toMatch(/inference\s+disabled/);

      expect((await run('keys', 'disable')).code).toBe(1);
      const unknown = await run('keys', 'disable', 'f'.repeat(64));
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('(404)');
    });

    it('keys disable refuses the last active management key (exit 1, 409)', async () => {
      // Disable the "ops" management key first; the bootstrap key is then the last one.
      const list = await run('keys', 'list', '--workspace', 'team');
      const ops = list.stdout.split('\n').find((l) => l.includes('management'))!.split(' ')[0];
      expect((await run('keys', 'disable', ops)).code).toBe(0);
      const r = await run('keys', 'disable', hashSecret(bootstrapSecret));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('(409)');
    });

    it('members add, list and remove', async () => {
      const added = await run('members', 'add', '--email', 'Ada@Example.com', '--first-name', 'Ada', '--last-name', 'Lovelace', '--role', 'org:admin');
      expect(added.code).toBe(0);
      const m = /Added member (user_[0-9a-f]+) <ada@example\.com> \(org:admin\)\./.exec(added.stdout);
      expect(m).not.toBeNull();
      const adaId = m![1];
      const bob = await run('members', 'add', '--email', 'bob@example.com');
      expect(bob.code).toBe(0);
      expect(bob.stdout).toContain('(org:member)');
      const bobId = /Added member (user_[0-9a-f]+)/.exec(bob.stdout)![1];

      const list = await run('members', 'list');
      expect(list.code).toBe(0);
      const lines = list.stdout.trim().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/org:admin\s+admin@localhost/);
      expect(lines[1]).toMatch(new RegExp(`^${adaId}\\s+org:admin\\s+ada@example.com\\s+Ada Lovelace$`));
      expect(lines[2]).toMatch(new RegExp(`^${bobId}\\s+org:member\\s+bob@example.com`));

      const dup = await run('members', 'add', '--email', 'ADA@example.com');
      expect(dup.code).toBe(1);
      expect(dup.stderr).toContain('(409)');
      expect((await run('members', 'add', '--email', 'not-an-email')).code).toBe(1);
      expect((await run('members', 'add', '--email', 'x@example.com', '--role', 'owner')).code).toBe(1);
      expect((await run('members', 'add')).code).toBe(1);

      const removed = await run('members', 'remove', bobId);
      expect(removed.code).toBe(0);
      expect(removed.stdout).toContain(`Removed member ${bobId}.`);
      expect((await run('members', 'list')).stdout).not.toContain('bob@example.com');
      const again = await run('members', 'remove', bobId);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('(404)');
      expect((await run('members', 'remove')).code).toBe(1);

      // The owner holds the bootstrap key and Ada is removable; after that the owner is the last admin.
      expect((await run('members', 'remove', adaId)).code).toBe(0);
      const ownerId = (await run('members', 'list')).stdout.trim().split(/\s+/)[0];
      const last = await run('members', 'remove', ownerId);
      expect(last.code).toBe(1);
      expect(last.stderr).toContain('(409)');
    });

    it('credits add (top-ups and adjustments, one ledger row each) and credits show', async () => {
      const first = await run('credits', 'add', '0.1', '--note', 'invoice 1');
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/Recorded top_up [0-9a-f-]{36}: 0\.1 USD\. Total credits 0\.1 USD, used 0 USD\./);
      expect((await run('credits', 'add', '0.2')).stdout).toContain('Total credits 0.3 USD'); // not 0.30000000000000004
      const adj = await run('credits', 'add', '--adjustment', '--', '-0.05');
      expect(adj.code, adj.stderr).toBe(0);
      expect(adj.stdout).toContain('Recorded adjustment');
      expect(adj.stdout).toContain('Total credits 0.25 USD');

      const show = await run('credits', 'show');
      expect(show.code).toBe(0);
      const lines = show.stdout.trim().split('\n');
      expect(lines[0]).toBe('Total credits 0.25 USD, used 0 USD (not enforced: GATEWAY_CREDITS is off).');
      expect(lines).toHaveLength(4);
      expect(lines[1]).toMatch(/adjustment\s+-0\.05\s+cli$/);
      expect(lines[3]).toMatch(/top_up\s+0\.1\s+cli\s+invoice 1$/);

      for (const bad of [['credits', 'add'], ['credits', 'add', 'ten'], ['credits', 'add', '0'], ['credits', 'add', '--', '-1']]) {
        const r = await run(...bad);
        expect(r.code, bad.join(' ')).toBe(1);
        expect(r.stderr).toMatch(/^Error: /);
      }
      expect((await run('credits', 'add', '--adjustment', '--', '-100')).stderr).toContain('(400)');
    });
  });
});
