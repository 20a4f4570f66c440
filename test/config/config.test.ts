import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(ext: string, text: string): string {
  const p = join(dir, `config-${++n}.${ext}`);
  writeFileSync(p, text);
  return p;
}

/** The ConfigError thrown for an environment (fails the test when none is thrown). */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    // The message lists every problem.
    for (const p of e.problems) expect(e.message).toContain(p);
    return e.problems;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

const ADMIN = 'sk-gw-v1-' + '0123456789abcdef'.repeat(4);

describe('loadConfig: defaults', () => {
  it('an empty environment gives the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'sqlite:./data/gateway.db',
      redisUrl: null,
      adminKey: null,
      adminEmail: 'admin@localhost',
      logLevel: 'info',
      bodyLimit: 10_485_760,
      keyCacheTtlMs: 30_000,
      shutdownGraceMs: 30_000,
      file: {},
      webSearch: null,
      webFetch: 'off',
    });
  });

  it('server tools: the SearXNG URL, web fetch (public only unless private addresses are allowed too)', () => {
    expect(loadConfig({ GATEWAY_WEB_SEARCH_URL: 'http://searxng:8080' }).webSearch).toEqual({ engine: 'searxng', url: 'http://searxng:8080', apiKey: null });
    expect(loadConfig({ GATEWAY_WEB_SEARCH_ENGINE: 'tavily', GATEWAY_WEB_SEARCH_API_KEY: 'tvly-x' }).webSearch).toEqual({ engine: 'tavily', url: 'https://api.tavily.com', apiKey: 'tvly-x' });
    expect(problems({ GATEWAY_WEB_SEARCH_ENGINE: 'tavily' })[0]).toMatch(/^GATEWAY_WEB_SEARCH_API_KEY is required/);
    expect(problems({ GATEWAY_WEB_SEARCH_ENGINE: 'google' })[0]).toMatch(/^GATEWAY_WEB_SEARCH_ENGINE must be searxng or tavily/);
    expect(loadConfig({ GATEWAY_WEB_FETCH: 'true' }).webFetch).toBe('public');
    expect(loadConfig({ GATEWAY_WEB_FETCH: '1', GATEWAY_WEB_FETCH_ALLOW_PRIVATE: 'true' }).webFetch).toBe('private');
    expect(loadConfig({ GATEWAY_WEB_FETCH_ALLOW_PRIVATE: 'true' }).webFetch).toBe('off');
    expect(problems({ GATEWAY_WEB_SEARCH_URL: 'searxng:8080' })[0]).toMatch(/^GATEWAY_WEB_SEARCH_URL must be an http/);
    expect(problems({ GATEWAY_WEB_FETCH: 'sometimes' })[0]).toMatch(/^GATEWAY_WEB_FETCH must be true or false/);
  });

  it('reads every setting from the environment', () => {
    const c = loadConfig({
      PORT: '9090',
      HOST: '127.0.0.1',
      GATEWAY_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      GATEWAY_REDIS_URL: 'redis://127.0.0.1:6379',
      GATEWAY_ADMIN_KEY: ADMIN,
      GATEWAY_ADMIN_EMAIL: 'ops@example.com',
      GATEWAY_LOG_LEVEL: 'debug',
      GATEWAY_BODY_LIMIT: '2048',
      GATEWAY_KEY_CACHE_TTL_MS: '0',
      GATEWAY_SHUTDOWN_GRACE_MS: '500',
    });
    expect(c).toMatchObject({
      port: 9090,
      host: '127.0.0.1',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/test',
      redisUrl: 'redis://127.0.0.1:6379',
      adminKey: ADMIN,
      adminEmail: 'ops@example.com',
      logLevel: 'debug',
      bodyLimit: 2048,
      keyCacheTtlMs: 0,
      shutdownGraceMs: 500,
    });
  });

  it('accepts each supported database URL form, redis and rediss, and every log level', () => {
    for (const url of ['sqlite:./x.db', 'sqlite::memory:', 'sqlite:/tmp/abs.db', 'postgres://u@h/db', 'postgresql://u:p@h:5433/db']) {
      expect(loadConfig({ GATEWAY_DATABASE_URL: url }).databaseUrl).toBe(url);
    }
    expect(loadConfig({ GATEWAY_REDIS_URL: 'rediss://h:6380' }).redisUrl).toBe('rediss://h:6380');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) expect(loadConfig({ GATEWAY_LOG_LEVEL: level }).logLevel).toBe(level);
    // Empty values mean "unset".
    expect(loadConfig({ PORT: '', GATEWAY_REDIS_URL: '', GATEWAY_ADMIN_KEY: '' })).toMatchObject({ port: 8080, redisUrl: null, adminKey: null });
    // Port bounds.
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
    // Admin key: 32 characters is the minimum.
    expect(loadConfig({ GATEWAY_ADMIN_KEY: 'k'.repeat(32) }).adminKey).toBe('k'.repeat(32));
  });
});

describe('loadConfig: the web console (GATEWAY_CONSOLE)', () => {
  it('is on by default, off with off or false (environment or file), and names a bad value', () => {
    expect(loadConfig({}).console).toBe(true);
    expect(loadConfig({ GATEWAY_CONSOLE: 'off' }).console).toBe(false);
    expect(loadConfig({ GATEWAY_CONSOLE: 'ON' }).console).toBe(true);
    expect(loadConfig({ GATEWAY_CONFIG: file('yaml', 'console: false\n') }).console).toBe(false);
    expect(loadConfig({ GATEWAY_CONFIG: file('yaml', 'console: off\n') }).console).toBe(false);
    expect(problems({ GATEWAY_CONSOLE: 'maybe' })).toEqual(['GATEWAY_CONSOLE must be on or off (got "maybe")']);
  });
});

describe('loadConfig: every mistake reported by name', () => {
  it('bad PORT', () => {
    for (const port of ['abc', '-1', '65536', '80.5']) {
      const p = problems({ PORT: port });
      expect(p).toHaveLength(1);
      expect(p[0]).toMatch(/^PORT /);
      expect(p[0]).toContain(port);
    }
  });

  it('bad database URL', () => {
    const p = problems({ GATEWAY_DATABASE_URL: 'mysql://root@localhost/db' });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^GATEWAY_DATABASE_URL /);
  });

  it('bad redis URL', () => {
    const p = problems({ GATEWAY_REDIS_URL: 'http://localhost:6379' });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^GATEWAY_REDIS_URL /);
  });

  it('short (or spaced) admin key', () => {
    expect(problems({ GATEWAY_ADMIN_KEY: 'k'.repeat(31) })[0]).toMatch(/^GATEWAY_ADMIN_KEY .*32/);
    expect(problems({ GATEWAY_ADMIN_KEY: `${'k'.repeat(20)} ${'k'.repeat(20)}` })[0]).toMatch(/^GATEWAY_ADMIN_KEY /);
  });

  it('bad log level, admin email, body limit, cache TTL, shutdown grace', () => {
    expect(problems({ GATEWAY_LOG_LEVEL: 'verbose' })[0]).toMatch(/^GATEWAY_LOG_LEVEL .*verbose/);
    expect(problems({ GATEWAY_ADMIN_EMAIL: 'not an email' })[0]).toMatch(/^GATEWAY_ADMIN_EMAIL /);
    expect(problems({ GATEWAY_BODY_LIMIT: '100' })[0]).toMatch(/^GATEWAY_BODY_LIMIT /);
    expect(problems({ GATEWAY_KEY_CACHE_TTL_MS: '-5' })[0]).toMatch(/^GATEWAY_KEY_CACHE_TTL_MS /);
    expect(problems({ GATEWAY_SHUTDOWN_GRACE_MS: 'soon' })[0]).toMatch(/^GATEWAY_SHUTDOWN_GRACE_MS /);
  });

  it('lists all problems at once', () => {
    const p = problems({
      PORT: 'abc',
      GATEWAY_DATABASE_URL: 'mysql://x',
      GATEWAY_REDIS_URL: 'http://x',
      GATEWAY_ADMIN_KEY: 'short',
      GATEWAY_LOG_LEVEL: 'loud',
    });
    expect(p).toHaveLength(5);
    for (const name of ['PORT', 'GATEWAY_DATABASE_URL', 'GATEWAY_REDIS_URL', 'GATEWAY_ADMIN_KEY', 'GATEWAY_LOG_LEVEL']) {
      expect(p.some((x) => x.startsWith(`${name} `)), name).toBe(true);
    }
    try {
      loadConfig({ PORT: 'abc', GATEWAY_LOG_LEVEL: 'loud' });
    } catch (err) {
      expect((err as Error).name).toBe('ConfigError');
      expect((err as Error).message).toMatch(/^Invalid configuration:\n {2}- PORT .*\n {2}- GATEWAY_LOG_LEVEL /);
    }
  });

  it('the admin key value is never echoed in a problem', () => {
    const secret = 'tooshort-secret';
    const p = problems({ GATEWAY_ADMIN_KEY: secret });
    expect(p.join('\n')).not.toContain(secret);
  });
});

describe('loadConfig: config file (GATEWAY_CONFIG)', () => {
  it('reads a YAML file', () => {
    const path = file(
      'yaml',
      [
        'port: 9000',
        'host: 127.0.0.1',
        'database_url: postgres://postgres@127.0.0.1:5432/test',
        'redis_url: redis://127.0.0.1:6379',
        `admin_key: ${ADMIN}`,
        'admin_email: yaml@example.com',
        'log_level: warn',
        'body_limit: 4096',
        'key_cache_ttl_ms: 1000',
        'shutdown_grace_ms: 2000',
        'providers:',
        '  - id: local',
      ].join('\n'),
    );
    const c = loadConfig({ GATEWAY_CONFIG: path });
    expect(c).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/test',
      redisUrl: 'redis://127.0.0.1:6379',
      adminKey: ADMIN,
      adminEmail: 'yaml@example.com',
      logLevel: 'warn',
      bodyLimit: 4096,
      keyCacheTtlMs: 1000,
      shutdownGraceMs: 2000,
    });
    // Sections for other modules are kept as given.
    expect(c.file.providers).toEqual([{ id: 'local' }]);
  });

  it('reads a .yml file and a JSON file', () => {
    expect(loadConfig({ GATEWAY_CONFIG: file('yml', 'port: 7001\n') }).port).toBe(7001);
    const json = file('json', JSON.stringify({ port: 7002, log_level: 'error', database_url: 'sqlite:/tmp/from-json.db', routing: { retries: 2 } }));
    const c = loadConfig({ GATEWAY_CONFIG: json });
    expect(c).toMatchObject({ port: 7002, logLevel: 'error', databaseUrl: 'sqlite:/tmp/from-json.db' });
    expect(c.file.routing).toEqual({ retries: 2 });
  });

  it('the environment wins over the file', () => {
    const path = file('yaml', 'port: 9000\nlog_level: warn\nadmin_email: file@example.com\n');
    const c = loadConfig({ GATEWAY_CONFIG: path, PORT: '9100', GATEWAY_LOG_LEVEL: 'debug' });
    expect(c).toMatchObject({ port: 9100, logLevel: 'debug', adminEmail: 'file@example.com' });
    const json = file('json', JSON.stringify({ port: 9000, host: 'filehost' }));
    expect(loadConfig({ GATEWAY_CONFIG: json, PORT: '9200' })).toMatchObject({ port: 9200, host: 'filehost' });
  });

  it('an unknown file key is reported by name, with the other problems', () => {
    const path = file('yaml', 'port: 9000\ncolour: blue\nlog_levle: debug\n');
    const p = problems({ GATEWAY_CONFIG: path, GATEWAY_REDIS_URL: 'nope://x' });
    expect(p.some((x) => x.startsWith('colour ') && x.includes('not a known setting'))).toBe(true);
    expect(p.some((x) => x.startsWith('log_levle '))).toBe(true);
    expect(p.some((x) => x.startsWith('GATEWAY_REDIS_URL '))).toBe(true);
    expect(p).toHaveLength(3);
  });

  it('invalid values in the file are reported under their setting', () => {
    const p = problems({ GATEWAY_CONFIG: file('yaml', 'port: high\nlog_level: shouty\ndatabase_url: mongodb://x\n') });
    expect(p.some((x) => x.startsWith('PORT '))).toBe(true);
    expect(p.some((x) => x.startsWith('GATEWAY_LOG_LEVEL '))).toBe(true);
    expect(p.some((x) => x.startsWith('GATEWAY_DATABASE_URL '))).toBe(true);
    expect(problems({ GATEWAY_CONFIG: file('yaml', 'port:\n  nested: 1\n') })[0]).toMatch(/^port .*scalar/);
  });

  it('an unreadable or malformed file is reported', () => {
    expect(problems({ GATEWAY_CONFIG: join(dir, 'missing.yaml') })[0]).toMatch(/^GATEWAY_CONFIG: cannot read/);
    expect(problems({ GATEWAY_CONFIG: file('json', '{"port": ') })[0]).toMatch(/^GATEWAY_CONFIG: .* is not valid JSON/);
    expect(problems({ GATEWAY_CONFIG: file('yaml', 'port: [1, 2\n') })[0]).toMatch(/^GATEWAY_CONFIG: .* is not valid YAML/);
    expect(problems({ GATEWAY_CONFIG: file('yaml', '- a\n- b\n') })[0]).toMatch(/^GATEWAY_CONFIG: .* mapping/);
    // An empty file is an empty configuration.
    expect(loadConfig({ GATEWAY_CONFIG: file('yaml', '') }).port).toBe(8080);
  });
});

describe('workers and upstream connections', () => {
  const shared = { GATEWAY_DATABASE_URL: 'postgres://u@db:5432/gw', GATEWAY_REDIS_URL: 'redis://r:6379' };

  it('GATEWAY_WORKERS defaults to the number of cores with PostgreSQL and Redis, else 1', async () => {
    const { availableParallelism } = await import('node:os');
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ GATEWAY_REDIS_URL: 'redis://r:6379' }).workers).toBe(1);
    expect(loadConfig({ GATEWAY_DATABASE_URL: 'postgres://u@db:5432/gw' }).workers).toBe(1);
    expect(loadConfig(shared).workers).toBe(availableParallelism());
    expect(loadConfig({ ...shared, GATEWAY_WORKERS: 'auto' }).workers).toBe(availableParallelism());
    expect(loadConfig({ ...shared, GATEWAY_WORKERS: '3' }).workers).toBe(3);
    expect(loadConfig({ GATEWAY_WORKERS: '1' }).workers).toBe(1);
  });

  it('more than one worker without PostgreSQL and Redis stops the start, saying what is missing', () => {
    const [p] = problems({ GATEWAY_WORKERS: '2', GATEWAY_REDIS_URL: 'redis://r:6379' });
    expect(p).toMatch(/^GATEWAY_WORKERS=2 needs a shared store: GATEWAY_REDIS_URL and a postgres:\/\/ GATEWAY_DATABASE_URL/);
    expect(problems({ GATEWAY_WORKERS: '4' })[0]).toMatch(/^GATEWAY_WORKERS=4 needs a shared store/);
    expect(problems({ GATEWAY_WORKERS: '0' })[0]).toMatch(/^GATEWAY_WORKERS must be an integer from 1 to 1024/);
  });

  it('GATEWAY_UPSTREAM_CONNECTIONS and GATEWAY_UPSTREAM_HTTP2, from the environment or the file', () => {
    expect(loadConfig({}).upstream).toEqual({ connections: 16_384, http2: false });
    expect(loadConfig({ GATEWAY_UPSTREAM_CONNECTIONS: '500', GATEWAY_UPSTREAM_HTTP2: 'true' }).upstream).toEqual({ connections: 500, http2: true });
    expect(loadConfig({ GATEWAY_CONFIG: file('yaml', 'upstream_connections: 64\nworkers: 1\n') }).upstream.connections).toBe(64);
    expect(problems({ GATEWAY_UPSTREAM_CONNECTIONS: '0' })[0]).toMatch(/^GATEWAY_UPSTREAM_CONNECTIONS must be an integer from 1 to 1000000/);
  });
});
