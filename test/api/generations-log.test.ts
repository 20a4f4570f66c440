/** GET /generations: the request log, newest first, cursor-paged and filtered, scoped like GET /generation?id=. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey } from '../helpers.js';
import { startClockedEnv, type ClockedEnv } from '../chat/util.js';
import { expectError, expectStatus } from './util.js';

const MIN = 60_000;

describe.each(BACKENDS)('GET /generations (%s)', (backend) => {
  let env: ClockedEnv;
  let other: { key: string; hash: string };
  /** Every record made, as GET /generation?id= shows it, oldest first. */
  const made: any[] = [];
  let start = 0;

  beforeAll(async () => {
    env = await startClockedEnv(backend);
    other = await createInferenceKey(env.t, { name: 'other' });
    start = Date.now();
    const ask = async (key: string, body: Record<string, unknown>, status = 200) => {
      env.advance(MIN);
      const res = await env.t.call('POST', '/chat/completions', { key, body: { messages: [{ role: 'user', content: 'hi' }], ...body } });
      expectStatus(res, status);
      return res;
    };
    await ask(env.key, { model: 'test/alpha', session_id: 'sess-1' });
    await ask(env.key, { model: 'test/alpha', max_tokens: 1 });
    await ask(env.key, { model: 'test/beta', session_id: 'sess-1' });
    await ask(other.key, { model: 'test/alpha' });
    await ask(env.key, { model: 'nobody/nothing' }, 404);
    await ask(other.key, { model: 'test/beta', session_id: 'sess-2' });
    await ask(env.key, { model: 'test/alpha' });
    await env.t.gw.svc.recorder.flush();
    const all: any[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const res = await env.t.call('GET', `/generations?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expectStatus(res, 200);
      all.push(...res.body.data);
      cursor = res.body.next_cursor;
    }
    for (const g of all.reverse()) made.push((await env.t.call('GET', `/generation?id=${g.id}`)).body.data);
  });
  afterAll(async () => env?.close());

  const ids = (rows: any[]) => rows.map((g) => g.id);
  const newestFirst = (rows: any[]) => ids([...rows].reverse());
  const list = async (query: string, key?: string) => {
    const res = await env.t.call('GET', `/generations${query}`, key ? { key } : {});
    expectStatus(res, 200);
    return res.body;
  };

  it('lists every record newest first, in GET /generation shape, and pages by cursor without gaps or repeats', async () => {
    expect(made.length).toBeGreaterThanOrEqual(6); // the unknown model may or may not leave a record
    const everything = await list('?limit=200');
    expect(everything.next_cursor).toBeNull();
    // GET /generation's shape, plus the link to the logged content (null: I/O logging is off here).
    expect(everything.data).toEqual([...made].reverse().map((g) => ({ ...g, content_url: null })));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page.data));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(newestFirst(made));
  });

  it('filters by time range, key, model, provider, api, status, finish reason, session, cost and latency', async () => {
    const check = async (query: string, pick: (g: any) => boolean) => {
      const expected = newestFirst(made.filter(pick));
      expect(ids((await list(query)).data), query).toEqual(expected);
      return expected.length;
    };
    const mid = made[2].created_at;
    expect(await check(`?from=${mid}`, (g) => g.created_at >= mid)).toBeGreaterThan(0);
    expect(await check(`?to=${mid}`, (g) => g.created_at < mid)).toBeGreaterThan(0);
    await check(`?from=${new Date(start).toISOString()}&to=${mid}`, (g) => g.created_at < mid);
    expect(await check(`?api_key_hash=${other.hash}`, (g) => g.api_key_hash === other.hash)).toBe(2);
    expect(await check('?model=test/beta', (g) => g.model === 'test/beta' || g.requested_model === 'test/beta')).toBe(2);
    const provider = made[0].provider_name;
    expect(await check(`?provider=${provider}`, (g) => g.provider_name === provider)).toBeGreaterThan(0);
    expect(await check('?api_type=completions', (g) => g.api_type === 'completions')).toBe(made.length);
    expect(await check('?api_type=embeddings', () => false)).toBe(0);
    expect(await check('?status=200', (g) => g.status === 200)).toBeGreaterThanOrEqual(6);
    expect(await check('?finish_reason=length', (g) => g.finish_reason === 'length')).toBe(1);
    expect(await check('?session_id=sess-1', (g) => g.session_id === 'sess-1')).toBe(2);
    const costs = made.map((g) => g.total_cost).sort((a, b) => a - b);
    const c = costs[Math.floor(costs.length / 2)];
    await check(`?min_cost=${c}`, (g) => g.total_cost >= c);
    await check(`?max_cost=${c}`, (g) => g.total_cost <= c);
    const lat = made.map((g) => g.latency).sort((a, b) => a - b)[Math.floor(made.length / 2)];
    await check(`?min_latency_ms=${lat}&max_latency_ms=${lat + 1000}`, (g) => g.latency >= lat && g.latency <= lat + 1000);
    await check('?workspace_id=default', () => true);
    const owner = (await env.t.call('GET', '/organization/members')).body.data[0].id;
    await check(`?user_id=${owner}`, () => true);
  });

  it('shows an inference key only its own records', async () => {
    expect(ids((await list('', other.key)).data)).toEqual(newestFirst(made.filter((g) => g.api_key_hash === other.hash)));
    expect(ids((await list(`?api_key_hash=${other.hash}`, other.key)).data)).toHaveLength(2);
    expectError(await env.t.call('GET', `/generations?api_key_hash=${env.keyHash}`, { key: other.key }), 400, { field: 'api_key_hash' });
    expectError(await env.t.call('GET', '/generations?workspace_id=default', { key: other.key }), 400, { field: 'workspace_id' });
  });

  it('validates every query parameter (400 naming it)', async () => {
    const bad: Array<[string, string]> = [
      ['from=yesterday', 'from'],
      ['to=2026-13-01', 'to'],
      [`from=${made[3].created_at}&to=${made[1].created_at}`, 'to'],
      ['api_key_hash=xyz', 'api_key_hash'],
      ['status=99', 'status'],
      ['status=ok', 'status'],
      ['min_cost=-1', 'min_cost'],
      ['max_cost=abc', 'max_cost'],
      ['min_cost=2&max_cost=1', 'max_cost'],
      ['min_latency_ms=1.5', 'min_latency_ms'],
      ['min_latency_ms=10&max_latency_ms=5', 'max_latency_ms'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['cursor=garbage', 'cursor'],
      ['model=', 'model'],
      ['user_id=user_nobody', 'user_id'],
      ['colour=blue', 'colour'],
    ];
    for (const [q, field] of bad) expectError(await env.t.call('GET', `/generations?${q}`), 400, { field });
    expectError(await env.t.call('GET', '/generations?workspace_id=no-such-workspace'), 404);
    expectError(await env.t.call('GET', '/generations', { key: null }), 401);
  });
});
