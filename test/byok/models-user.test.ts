/**
 * `GET /models/user` with BYOK (docs/byok.md): a model served only by a provider without the operator's key is listed
 * for the keys whose workspace has a credential for that provider (and only those), with the BYOK endpoint's pricing;
 * a credential's `allowed_models` and `allowed_api_key_hashes` narrow it, and a disabled credential lists nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICES, startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey } from '../helpers.js';

const ZDR = { training: false, retains_prompts: false, zdr: true };

describe('GET /models/user honours BYOK credentials', () => {
  let env: ChatEnv;
  let team: { key: string; hash: string };
  let teammate: { key: string; hash: string };
  let other: { key: string; hash: string };
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      env: { GATEWAY_ENCRYPTION_KEY: 'models-user-byok-encryption-key-0123456789' },
      catalog: (sim) => ({
        providers: [{ slug: 'sim-team', name: 'Sim Team', protocol: 'openai', base_url: `${sim}/sim-team/v1`, data_policy: ZDR }],
        models: [
          { id: 'test/team-only', name: 'Team only', context_length: 32000 },
          { id: 'test/team-other', name: 'Team other', context_length: 32000 },
        ],
        endpoints: [
          { model: 'test/team-only', provider: 'sim-team', upstream_model: 'team-1', pricing: PRICES.a, supported_parameters: ['max_tokens'] },
          { model: 'test/team-other', provider: 'sim-team', upstream_model: 'team-2', pricing: PRICES.a, supported_parameters: ['max_tokens'] },
        ],
      }),
    });
    const ws = (await env.t.call('POST', '/workspaces', { body: { name: 'Team', slug: 'team-mu' } })).body.data.id as string;
    team = await createInferenceKey(env.t, { name: 'team key', workspace_id: ws });
    teammate = await createInferenceKey(env.t, { name: 'teammate key', workspace_id: ws });
    other = await createInferenceKey(env.t, { name: 'other key' });
  });
  afterAll(async () => env?.close());

  const listed = async (key: string): Promise<string[]> => {
    const r = await fetch(`${env.t.api}/models/user`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
  };

  it('without a credential the BYOK-only models are not listed; with one, for its workspace only', async () => {
    expect(await listed(team.key)).not.toContain('test/team-only');
    const ws = (await env.t.call('GET', `/keys/${team.hash}`)).body.data.workspace_id as string;
    const created = await env.t.call('POST', '/byok', { body: { provider: 'sim-team', key: 'team-secret-0001', workspace_id: ws, allowed_models: ['test/team-only'] } });
    expect(created.status).toBe(201);
    const mine = await listed(team.key);
    expect(mine).toContain('test/team-only');
    expect(mine).not.toContain('test/team-other'); // allowed_models
    expect(mine).toContain('test/alpha'); // the operator's models stay
    expect(await listed(other.key)).not.toContain('test/team-only');
    // Listed means routable: the key's chat is served on its credential.
    const chat = await fetch(`${env.t.api}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${team.key}` }, body: JSON.stringify({ model: 'test/team-only', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }) });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as { usage: { is_byok: boolean } }).usage.is_byok).toBe(true);

    // allowed_api_key_hashes narrows it to one key of the workspace; disabling it lists nothing.
    const id = created.body.data.id as string;
    expect((await env.t.call('PATCH', `/byok/${id}`, { body: { allowed_api_key_hashes: [team.hash] } })).status).toBe(200);
    expect(await listed(team.key)).toContain('test/team-only');
    expect(await listed(teammate.key)).not.toContain('test/team-only');
    expect((await env.t.call('PATCH', `/byok/${id}`, { body: { disabled: true } })).status).toBe(200);
    expect(await listed(team.key)).not.toContain('test/team-only');
  });
});
