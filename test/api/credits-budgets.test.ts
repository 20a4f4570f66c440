/**
 * Credits (GET /credits, POST/GET /credits/adjustments) and workspace budgets (/workspaces/{id}/budgets[/{interval}])
 * over HTTP, on both databases: happy paths, every error status, bad input, and the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, startGateway, type TestGateway } from '../helpers.js';
import { expectError, expectStatus, UUID } from './util.js';

describe.each(BACKENDS)('credits and workspace budgets (%s)', (backend) => {
  let t: TestGateway;
  let inference: string;

  beforeAll(async () => {
    t = await startGateway(backend);
    const res = await t.call('POST', '/keys', { body: { name: 'app' } });
    expectStatus(res, 201);
    inference = res.body.key;
  });
  afterAll(async () => t?.close());

  it('GET /credits starts at zero; top-ups and adjustments are ledger rows summed exactly', async () => {
    const empty = await t.call('GET', '/credits');
    expectStatus(empty, 200);
    expect(empty.body).toEqual({ data: { total_credits: 0, total_usage: 0 } });

    for (const amount_usd of [0.1, 0.2]) {
      const r = await t.call('POST', '/credits/adjustments', { body: { amount_usd, note: 'invoice 42' } });
      expectStatus(r, 201);
      expect(r.body.data).toMatchObject({ id: expect.stringMatching(UUID), amount_usd, kind: 'top_up', note: 'invoice 42', created_by: expect.any(String) });
    }
    const adj = await t.call('POST', '/credits/adjustments', { body: { amount_usd: -0.05, kind: 'adjustment' } });
    expectStatus(adj, 201);
    expect(adj.body.balance).toEqual({ total_credits: 0.25, total_usage: 0 }); // 0.1 + 0.2 - 0.05 as floats is 0.25000000000000006
    expect((await t.call('GET', '/credits')).body.data.total_credits).toBe(0.25);

    const ledger = await t.call('GET', '/credits/adjustments?limit=2');
    expectStatus(ledger, 200);
    expect(ledger.body.total_count).toBe(3);
    expect(ledger.body.data.map((e: { amount_usd: number }) => e.amount_usd)).toEqual([-0.05, 0.2]);
  });

  it('refuses bad credit changes with 400 naming the field', async () => {
    expectError(await t.call('POST', '/credits/adjustments', { body: { amount_usd: 0 } }), 400, { field: 'amount_usd' });
    expectError(await t.call('POST', '/credits/adjustments', { body: { amount_usd: -1 } }), 400, { field: 'amount_usd' });
    expectError(await t.call('POST', '/credits/adjustments', { body: { amount_usd: -1000, kind: 'adjustment' } }), 400, { field: 'amount_usd' });
    expectError(await t.call('POST', '/credits/adjustments', { body: { amount_usd: 'ten' } }), 400, { field: 'amount_usd' });
    // Found by the fuzzer (seed 77, PostgreSQL answered 500): an amount beyond exact nano-dollars is a 400.
    expectError(await t.call('POST', '/credits/adjustments', { raw: '{"amount_usd":123456789012345678901234567890}' }), 400, { field: 'amount_usd' });
    expectError(await t.call('POST', '/credits/adjustments', { body: { amount_usd: 1, kind: 'gift' } }), 400, { field: 'kind' });
    expectError(await t.call('POST', '/credits/adjustments', { body: {} }), 400, { field: 'amount_usd' });
    expectError(await t.call('GET', '/credits/adjustments?limit=0'), 400, { field: 'limit' });
  });

  it('credits are for management keys only (401 without a key, 403 with an inference key)', async () => {
    expectError(await t.call('GET', '/credits', { key: null }), 401);
    expectError(await t.call('GET', '/credits', { key: inference }), 403);
    expectError(await t.call('POST', '/credits/adjustments', { key: inference, body: { amount_usd: 1 } }), 403);
  });

  it('workspace budgets: put, get, list with current usage, update, delete', async () => {
    const ws = await t.call('POST', '/workspaces', { body: { name: 'Budgets', slug: 'budgets' } });
    expectStatus(ws, 201);
    const id = ws.body.data.id;
    const none = await t.call('GET', '/workspaces/budgets/budgets');
    expectStatus(none, 200);
    expect(none.body).toEqual({ data: [], include_byok_in_budgets: false });

    const monthly = await t.call('PUT', '/workspaces/budgets/budgets/monthly', { body: { limit_usd: 100, include_byok_in_budgets: true } });
    expectStatus(monthly, 200);
    expect(monthly.body).toEqual({
      data: { id: expect.stringMatching(UUID), workspace_id: id, limit_usd: 100, reset_interval: 'monthly', created_at: expect.any(String), updated_at: expect.any(String), usage: 0 },
      include_byok_in_budgets: true,
    });
    const lifetime = await t.call('PUT', `/workspaces/${id}/budgets/lifetime`, { body: { limit_usd: 1000.5 } });
    expectStatus(lifetime, 200);
    expect(lifetime.body.data.reset_interval).toBeNull();
    expect(lifetime.body.include_byok_in_budgets).toBe(true); // omitted: unchanged
    expectStatus(await t.call('PUT', '/workspaces/budgets/budgets/daily', { body: { limit_usd: 5, include_byok_in_budgets: false } }), 200);

    const again = await t.call('PUT', '/workspaces/budgets/budgets/monthly', { body: { limit_usd: 90 } });
    expectStatus(again, 200);
    expect(again.body.data.id).toBe(monthly.body.data.id);
    expect(again.body.data.limit_usd).toBe(90);

    const list = await t.call('GET', '/workspaces/budgets/budgets');
    expect(list.body.include_byok_in_budgets).toBe(false);
    expect(list.body.data.map((b: { reset_interval: string | null; limit_usd: number }) => [b.reset_interval, b.limit_usd])).toEqual([['daily', 5], ['monthly', 90], [null, 1000.5]]);
    const one = await t.call('GET', '/workspaces/budgets/budgets/daily');
    expectStatus(one, 200);
    expect(one.body.data.limit_usd).toBe(5);

    const del = await t.call('DELETE', '/workspaces/budgets/budgets/daily');
    expectStatus(del, 200);
    expect(del.body).toEqual({ deleted: true });
    expectError(await t.call('GET', '/workspaces/budgets/budgets/daily'), 404);
    expectError(await t.call('DELETE', '/workspaces/budgets/budgets/daily'), 404);
  });

  it('budget limits must strictly decrease as the interval narrows', async () => {
    expectStatus(await t.call('POST', '/workspaces', { body: { name: 'Order', slug: 'order' } }), 201);
    expectStatus(await t.call('PUT', '/workspaces/order/budgets/weekly', { body: { limit_usd: 10 } }), 200);
    expectError(await t.call('PUT', '/workspaces/order/budgets/daily', { body: { limit_usd: 10 } }), 400, { field: 'limit_usd', rule: 'budget_order' });
    expectError(await t.call('PUT', '/workspaces/order/budgets/monthly', { body: { limit_usd: 9.99 } }), 400, { field: 'limit_usd', rule: 'budget_order' });
    expectError(await t.call('PUT', '/workspaces/order/budgets/lifetime', { body: { limit_usd: 10 } }), 400, { field: 'limit_usd', rule: 'budget_order' });
    expectStatus(await t.call('PUT', '/workspaces/order/budgets/daily', { body: { limit_usd: 9.99 } }), 200);
    expectStatus(await t.call('PUT', '/workspaces/order/budgets/lifetime', { body: { limit_usd: 10.01 } }), 200);
    // Nothing refused was stored.
    expect((await t.call('GET', '/workspaces/order/budgets')).body.data).toHaveLength(3);
  });

  it('refuses bad budget input and unknown workspaces', async () => {
    expectError(await t.call('PUT', '/workspaces/order/budgets/hourly', { body: { limit_usd: 1 } }), 400, { field: 'interval' });
    expectError(await t.call('PUT', '/workspaces/order/budgets/daily', { body: { limit_usd: 0 } }), 400, { field: 'limit_usd' });
    expectError(await t.call('PUT', '/workspaces/order/budgets/daily', { body: { limit_usd: -3 } }), 400, { field: 'limit_usd' });
    expectError(await t.call('PUT', '/workspaces/order/budgets/daily', { body: {} }), 400, { field: 'limit_usd' });
    expectError(await t.call('PUT', '/workspaces/order/budgets/daily', { body: { limit_usd: 1, include_byok_in_budgets: 'yes' } }), 400, { field: 'include_byok_in_budgets' });
    expectError(await t.call('GET', '/workspaces/order/budgets/yearly'), 400, { field: 'interval' });
    expectError(await t.call('GET', '/workspaces/nope/budgets'), 404);
    expectError(await t.call('GET', '/workspaces/nope/budgets/daily'), 404);
    expectError(await t.call('PUT', '/workspaces/nope/budgets/daily', { body: { limit_usd: 1 } }), 404);
    expectError(await t.call('DELETE', '/workspaces/nope/budgets/daily'), 404);
    expectError(await t.call('GET', '/workspaces/order/budgets', { key: null }), 401);
    expectError(await t.call('GET', '/workspaces/order/budgets', { key: inference }), 403);
  });

  it('the OpenAPI document has the new routes with real schemas', async () => {
    const doc = (await t.call('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/credits', 'get'],
      ['/credits/adjustments', 'post'],
      ['/credits/adjustments', 'get'],
      ['/workspaces/{id}/budgets', 'get'],
      ['/workspaces/{id}/budgets/{interval}', 'put'],
      ['/workspaces/{id}/budgets/{interval}', 'delete'],
    ]) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(JSON.stringify(op.responses)).not.toContain('{}');
    }
    expect(doc.paths['/credits/adjustments'].post.requestBody.content['application/json'].schema.properties.amount_usd.type).toBe('number');
    expect(doc.components.schemas.WorkspaceBudget.properties.limit_usd.type).toBe('number');
  });
});
