/**
 * `POST /files?provider=openai|anthropic` (docs/files.md): the file is stored on the provider's own Files API with the
 * key's BYOK credential for that provider (the simulator's /v1/files stands in for both), the provider's object is
 * answered in its shape, and the gateway keeps nothing. Refused without a usable BYOK credential, on the other file
 * routes, and for a management key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_FILES } from '../../src/sim/files.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const SECRET_OPENAI = 'sk-own-openai-5b7d9f1e3a';
const SECRET_ANTHROPIC = 'sk-ant-own-2c4e6a8b0d';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

describe('Files stored on a provider\'s own Files API (BYOK)', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      env: { GATEWAY_ENCRYPTION_KEY: 'files-test-encryption-key-0123456789abcdef' },
      catalog: (simUrl) => ({
        providers: [
          { slug: 'openai', name: 'OpenAI', protocol: 'openai', base_url: `${simUrl}/openai/v1`, data_policy: { training: false, retains_prompts: false, zdr: true } },
          { slug: 'anthropic', name: 'Anthropic', protocol: 'anthropic', base_url: `${simUrl}/anthropic/v1`, data_policy: { training: false, retains_prompts: false, zdr: true } },
        ],
      }),
    });
  });
  afterAll(async () => env?.close());

  const upload = async (query: string, extra: Record<string, string> = {}, key = env.key, headers: Record<string, string> = {}) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(extra)) form.append(k, v);
    form.append('file', new Blob([PDF]), 'paper.pdf');
    const res = await fetch(`${env.t.api}/files${query}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('without a BYOK credential for the provider: 400 naming provider, nothing sent', async () => {
    const before = SIM_FILES.size;
    const r = await upload('?provider=openai', { purpose: 'assistants' });
    expect(r.status).toBe(400);
    expect(r.body.error.metadata).toMatchObject({ field: 'provider', error_type: 'byok_required' });
    expect(SIM_FILES.size).toBe(before);
  });

  it('openai: stored with the BYOK key, the provider\'s object answered; the gateway lists nothing', async () => {
    expect((await env.t.call('POST', '/byok', { body: { provider: 'openai', key: SECRET_OPENAI } })).status).toBe(201);
    const r = await upload('?provider=openai', { purpose: 'assistants' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ _shape: 'openai', object: 'file', bytes: PDF.length, filename: 'paper.pdf', purpose: 'assistants', status: 'processed' });
    expect(r.body.id).toMatch(/^file-sim/);
    const stored = SIM_FILES.get(r.body.id)!;
    expect(stored).toMatchObject({ provider: 'openai', key: SECRET_OPENAI, filename: 'paper.pdf', purpose: 'assistants' });
    expect(stored.data.equals(PDF)).toBe(true);
    const list = await env.t.call('GET', '/files', { key: env.key });
    expect(list.body.data).toEqual([]);
    // Without purpose, OpenAI's default for model inputs.
    const d = await upload('?provider=openai');
    expect(SIM_FILES.get(d.body.id)?.purpose).toBe('user_data');
  });

  it('anthropic: Anthropic\'s headers and shape', async () => {
    expect((await env.t.call('POST', '/byok', { body: { provider: 'anthropic', key: SECRET_ANTHROPIC } })).status).toBe(201);
    const r = await upload('?provider=anthropic', {}, env.key, { 'anthropic-version': '2023-06-01' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ _shape: 'anthropic', type: 'file', filename: 'paper.pdf', size_bytes: PDF.length, downloadable: false });
    expect(SIM_FILES.get(r.body.id)).toMatchObject({ provider: 'anthropic', key: SECRET_ANTHROPIC });
  });

  it('provider on the other routes, or with a management key: 400; an unknown provider value: 400', async () => {
    const list = await env.t.call('GET', '/files?provider=openai', { key: env.key });
    expect(list.status).toBe(400);
    expect(list.body.error.message).toMatch(/^provider: only uploads/);
    const admin = await upload('?provider=openai', {}, env.t.adminKey);
    expect(admin.status).toBe(400);
    const bad = await upload('?provider=mistral');
    expect(bad.status).toBe(400);
  });
});
