/** POST /generation/feedback: structured feedback stored per generation (management keys). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenRouter } from '@openrouter/sdk';
import { ADMIN_KEY, BACKENDS } from '../helpers.js';
import { startClockedEnv, type ClockedEnv } from '../chat/util.js';
import { expectError, expectStatus } from './util.js';

describe.each(BACKENDS)('POST /generation/feedback (%s)', (backend) => {
  let env: ClockedEnv;
  let genId = '';

  beforeAll(async () => {
    env = await startClockedEnv(backend);
    const res = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hi' }] } });
    expectStatus(res, 200);
    genId = res.body.id;
  });
  afterAll(async () => env?.close());

  it('stores each submission for its generation, even before the record is flushed', async () => {
    const res = await env.t.call('POST', '/generation/feedback', { body: { generation_id: genId, category: 'incorrect_response', comment: 'Repeated itself.' } });
    expectStatus(res, 200);
    expect(res.body).toEqual({ data: { success: true } });
    await env.t.gw.svc.recorder.flush();
    expectStatus(await env.t.call('POST', '/generation/feedback', { body: { generation_id: genId, category: 'latency' } }), 200);
    const rows = await env.t.gw.svc.store.listGenerationFeedback(genId);
    expect(rows.map((r) => [r.category, r.comment])).toEqual([
      ['incorrect_response', 'Repeated itself.'],
      ['latency', null],
    ]);
    expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(rows[0]!.created_at)).toBeGreaterThan(0);
  });

  it('is what @openrouter/sdk sends (generations.submitFeedback)', async () => {
    const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: env.t.api });
    const res = await admin.generations.submitFeedback({ submitGenerationFeedbackRequest: { generationId: genId, category: 'formatting' } });
    expect(res.data.success).toBe(true);
    expect((await env.t.gw.svc.store.listGenerationFeedback(genId)).map((r) => r.category)).toContain('formatting');
  });

  it('validates the body, answers 404 for an unknown generation, refuses inference keys', async () => {
    expectError(await env.t.call('POST', '/generation/feedback', { body: { generation_id: 'gen-nothing', category: 'other' } }), 404);
    expectError(await env.t.call('POST', '/generation/feedback', { body: { generation_id: genId, category: 'rude' } }), 400, { field: 'category' });
    expectError(await env.t.call('POST', '/generation/feedback', { body: { category: 'other' } }), 400, { field: 'generation_id' });
    expectError(await env.t.call('POST', '/generation/feedback', { body: { generation_id: '', category: 'other' } }), 400, { field: 'generation_id' });
    expectError(await env.t.call('POST', '/generation/feedback', { body: { generation_id: genId, category: 'other', comment: 'x'.repeat(1001) } }), 400, { field: 'comment' });
    expectError(await env.t.call('POST', '/generation/feedback', { body: { generation_id: genId, category: 'other', comment: 5 } }), 400, { field: 'comment' });
    expectError(await env.t.call('POST', '/generation/feedback', { body: { generation_id: genId, category: 'other', extra: 1 } }), 400, { field: 'extra' });
    expectError(await env.t.call('POST', '/generation/feedback', { key: env.key, body: { generation_id: genId, category: 'other' } }), 403);
    expectError(await env.t.call('POST', '/generation/feedback', { key: null, body: { generation_id: genId, category: 'other' } }), 401);
  });
});
