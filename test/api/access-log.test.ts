/**
 * The access log line: one per request, written by the gateway's own formatter, byte for byte what pino writes for
 * the same fields (so log pipelines see no difference), with the key's short hash and workspace when authenticated.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/gateway.js';
import { ADMIN_KEY, startGateway, type TestGateway } from '../helpers.js';

const lines: string[] = [];
let t: TestGateway;

beforeAll(async () => {
  const logger = createLogger(loadConfig({ GATEWAY_LOG_LEVEL: 'info', GATEWAY_DATABASE_URL: 'sqlite::memory:' }), { write: (s: string) => void lines.push(s) });
  t = await startGateway('sqlite', { gateway: { logger } });
});
afterAll(() => t.close());

/** The line pino itself writes for these fields at this time. */
function pinoLine(fields: Record<string, unknown>, time: string): string {
  let out = '';
  const logger = pino({ level: 'info', base: { service: 'model-gateway' }, timestamp: () => `,"time":"${time}"` }, { write: (s: string) => void (out = s) });
  logger.info(fields, 'request');
  return out;
}

const accessLines = () => lines.filter((l) => l.includes('"msg":"request"'));

describe('access log', () => {
  it('writes one line per request, as pino would, with the caller key and workspace', async () => {
    lines.length = 0;
    const res = await t.call('GET', '/keys?x="quoted"&y=\\', { headers: { 'x-request-id': 'req-log-1' } });
    expect(res.status).toBe(200);
    const unauth = await t.call('GET', '/keys', { key: null, headers: { 'x-request-id': 'req-log-2' } });
    expect(unauth.status).toBe(401);
    await new Promise((r) => setTimeout(r, 20));
    const got = accessLines();
    expect(got).toHaveLength(2);
    const [a, b] = got.map((l) => JSON.parse(l));
    const keyHash = (await import('node:crypto')).createHash('sha256').update(ADMIN_KEY).digest('hex');
    expect(a).toMatchObject({ level: 30, service: 'model-gateway', request_id: 'req-log-1', method: 'GET', status: 200, key: keyHash.slice(0, 12), msg: 'request' });
    expect(a.url).toBe('/api/v1/keys?x=%22quoted%22&y=\\'); // fetch encodes the quotes; the backslash needs escaping
    expect(typeof a.workspace).toBe('string');
    expect(typeof a.ms).toBe('number');
    expect(b).toMatchObject({ request_id: 'req-log-2', status: 401, msg: 'request' });
    expect(b).not.toHaveProperty('key');
    // Byte for byte what pino writes for the same fields and time.
    for (const [raw, parsed] of [[got[0], a], [got[1], b]] as const) {
      const { level: _l, time, service: _s, msg: _m, ...fields } = parsed;
      expect(raw).toBe(pinoLine(fields, time));
    }
  });

  it('a logger with a mixin writes its access lines through pino, mixin included', async () => {
    const mixed: string[] = [];
    const logger = pino({ level: 'info', mixin: () => ({ zone: 'eu' }) }, { write: (s: string) => void mixed.push(s) });
    const g = await startGateway('sqlite', { gateway: { logger } });
    try {
      expect((await g.call('GET', '/keys', { headers: { 'x-request-id': 'req-mixin' } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 20));
      const line = mixed.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
      expect(line).toMatchObject({ zone: 'eu', request_id: 'req-mixin', status: 200, method: 'GET' });
    } finally {
      await g.close();
    }
  });

  it('writes nothing below level info', async () => {
    const quiet: string[] = [];
    const logger = createLogger(loadConfig({ GATEWAY_LOG_LEVEL: 'warn', GATEWAY_DATABASE_URL: 'sqlite::memory:' }), { write: (s: string) => void quiet.push(s) });
    const g = await startGateway('sqlite', { gateway: { logger } });
    try {
      expect((await g.call('GET', '/keys')).status).toBe(200);
      expect(quiet.filter((l) => l.includes('"msg":"request"'))).toHaveLength(0);
    } finally {
      await g.close();
    }
  });
});
