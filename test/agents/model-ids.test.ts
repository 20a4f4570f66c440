/**
 * Model ids as agents send them, through the API on both backends: bare and dated ids, config-file aliases and the
 * organization's alias map (PATCH /organization/settings `model_aliases`) route to catalog models; ambiguous and
 * unknown ids get a 404 naming the candidates; `/models/user` lists the aliases that routing resolves; the opt-in
 * workspace default for unknown models; GET /models/{id} for the OpenAI SDK's `models.retrieve`.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { BACKENDS } from '../helpers.js';

const CATALOG = {
  models: [
    { id: 'anthropic/claude-sonnet-4.5', canonical_slug: 'anthropic/claude-4.5-sonnet-20250929', name: 'Claude Sonnet 4.5', context_length: 200000, aliases: ['sonnet-house'] },
    { id: 'openai/gpt-5', canonical_slug: 'openai/gpt-5-2025-08-07', name: 'GPT-5', context_length: 400000 },
    { id: 'other/gpt-5', name: 'Another GPT-5', context_length: 400000 },
  ],
  endpoints: [
    { model: 'anthropic/claude-sonnet-4.5', provider: 'sim-anthropic', upstream_model: 'claude-sonnet-4-5', pricing: { prompt: '0.000003', completion: '0.000015' } },
    { model: 'openai/gpt-5', provider: 'sim-responses', upstream_model: 'gpt-5', pricing: { prompt: '0.00000125', completion: '0.00001' } },
    { model: 'other/gpt-5', provider: 'sim-a', upstream_model: 'gpt-5', pricing: { prompt: '0.00000125', completion: '0.00001' } },
  ],
};

const messages = (env: ChatEnv, model: string) =>
  env.t.call('POST', '/messages', { key: env.key, body: { model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] } });

describe.each(BACKENDS)('model ids as agents send them (%s)', (backend) => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv(backend, { catalog: CATALOG });
  });
  afterAll(async () => env?.close());

  it.each([
    ['claude-sonnet-4-5', 'anthropic/claude-sonnet-4.5'],
    ['claude-sonnet-4-5-20250929', 'anthropic/claude-sonnet-4.5'],
    ['sonnet-house', 'anthropic/claude-sonnet-4.5'],
    ['openai/gpt-5', 'openai/gpt-5'],
    ['test/alpha', 'test/alpha'],
  ])('%s routes to %s', async (requested, model) => {
    const res = await messages(env, requested);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.model).toBe(model);
  });

  it('an ambiguous id is a 404 naming the candidates', async () => {
    const res = await messages(env, 'gpt-5');
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('not_found_error');
    expect(res.body.error.message).toBe('gpt-5 is ambiguous: it matches openai/gpt-5, other/gpt-5; send one of these model IDs');
    expect(res.body.metadata.suggestions).toEqual(['openai/gpt-5', 'other/gpt-5']);
  });

  it('an unknown id is a 404 with close matches (chat completions envelope too)', async () => {
    const res = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'claude-sonet-4-5', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toMatch(/^claude-sonet-4-5 is not a valid model ID; did you mean anthropic\/claude-sonnet-4\.5/);
    expect(res.body.error.metadata.suggestions[0]).toBe('anthropic/claude-sonnet-4.5');
  });

  it('the organization alias map resolves, is validated, and /models/user lists what resolves', async () => {
    const bad = await env.t.call('PATCH', '/organization/settings', { body: { model_aliases: { 'gpt-6.1-sol': 'gpt-5' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('model_aliases.gpt-6.1-sol: gpt-5 is ambiguous');
    const taken = await env.t.call('PATCH', '/organization/settings', { body: { model_aliases: { 'openai/gpt-5': 'test/alpha' } } });
    expect(taken.status).toBe(400);
    const ok = await env.t.call('PATCH', '/organization/settings', { body: { model_aliases: { 'gpt-6.1-sol': 'openai/gpt-5', 'claude-opus-4-8': 'claude-sonnet-4-5' } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.model_aliases).toEqual({ 'gpt-6.1-sol': 'openai/gpt-5', 'claude-opus-4-8': 'anthropic/claude-sonnet-4.5' });
    expect((await env.t.call('GET', '/organization/settings')).body.data.model_aliases).toEqual(ok.body.data.model_aliases);

    const res = await env.t.call('POST', '/responses', { key: env.key, body: { model: 'gpt-6.1-sol', input: 'hi' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.model).toBe('openai/gpt-5');
    expect((await messages(env, 'claude-opus-4-8')).body.model).toBe('anthropic/claude-sonnet-4.5');

    const user = await env.t.call('GET', '/models/user', { key: env.key });
    const listed = new Map<string, string[]>(user.body.data.map((m: { id: string; aliases: string[] }) => [m.id, m.aliases]));
    expect(listed.get('anthropic/claude-sonnet-4.5')).toEqual(['sonnet-house', 'claude-opus-4-8']);
    expect(listed.get('openai/gpt-5')).toEqual(['gpt-6.1-sol']);
    // Every alias /models/user lists routes to its model.
    for (const [id, aliases] of listed) {
      for (const alias of aliases) expect((await messages(env, alias)).body.model, alias).toBe(id);
    }
    expect((await env.t.call('PATCH', '/organization/settings', { body: { model_aliases: null } })).body.data.model_aliases).toBeNull();
    expect((await messages(env, 'gpt-6.1-sol')).status).toBe(404);
  });

  it('GET /models/{id}: the OpenAI SDK models.retrieve with the slash encoded, bare and dated ids', async () => {
    const client = new OpenAI({ baseURL: env.t.api, apiKey: env.key });
    const m = await client.models.retrieve('openai/gpt-5');
    expect(m).toMatchObject({ id: 'openai/gpt-5', object: 'model', owned_by: 'openai' });
    expect((await client.models.retrieve('claude-sonnet-4-5-20250929')).id).toBe('anthropic/claude-sonnet-4.5');
    const raw = await env.t.call('GET', '/models/openai/gpt-5', { key: null });
    expect(raw.status).toBe(200);
    expect(raw.body.id).toBe('openai/gpt-5');
    const canonical = await env.t.call('GET', '/models/openai%2Fgpt-5-2025-08-07', { key: null });
    expect(canonical.body.id).toBe('openai/gpt-5');
    const missing = await env.t.call('GET', '/models/nothing-like-it', { key: null });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('nothing-like-it is not a valid model ID');
  });
});

describe('unknown models and the workspace default (opt-in)', () => {
  it('off by default; with GATEWAY_UNKNOWN_MODEL_FALLBACK=true an unknown model goes to default_text_model', async () => {
    const off = await startChatEnv('sqlite', { catalog: CATALOG });
    const on = await startChatEnv('sqlite', { catalog: CATALOG, env: { GATEWAY_UNKNOWN_MODEL_FALLBACK: 'true' } });
    try {
      for (const env of [off, on]) {
        const ws = (await env.t.call('GET', '/workspaces')).body.data[0];
        expect((await env.t.call('PATCH', `/workspaces/${ws.id}`, { body: { default_text_model: 'test/alpha' } })).status).toBe(200);
      }
      expect((await messages(off, 'some-agent-default')).status).toBe(404);
      const res = await messages(on, 'some-agent-default');
      expect(res.status).toBe(200);
      expect(res.body.model).toBe('test/alpha');
      // An ambiguous id is never replaced: the caller must choose.
      expect((await messages(on, 'gpt-5')).status).toBe(404);
    } finally {
      await off.close();
      await on.close();
    }
  });
});
