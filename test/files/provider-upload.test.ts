/**
 * `POST /files?provider=openai|anthropic` (docs/files.md): the file is stored on the provider's own Files API with the
 * key's BYOK credential for that provider (the simulator's /v1/files stands in for both), the provider's object is
 * answered in its shape, and the gateway records it: listed by `GET /files` with its provider, shown by
 * `GET /files/{id}`, deleted on the provider too (with the credential that stored it) by `DELETE /files/{id}` and by
 * the workspace's deletion; outside the quota, not downloadable. Refused without a usable BYOK credential, on the other
 * file routes, and for a management key.
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

  it('openai: stored with the BYOK key, the provider\'s object answered; listed and shown with its provider', async () => {
    expect((await env.t.call('POST', '/byok', { body: { provider: 'openai', key: SECRET_OPENAI } })).status).toBe(201);
    const r = await upload('?provider=openai', { purpose: 'assistants' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ _shape: 'openai', object: 'file', bytes: PDF.length, filename: 'paper.pdf', purpose: 'assistants', status: 'processed' });
    expect(r.body.id).toMatch(/^file-sim/);
    const stored = SIM_FILES.get(r.body.id)!;
    expect(stored).toMatchObject({ provider: 'openai', key: SECRET_OPENAI, filename: 'paper.pdf', purpose: 'assistants' });
    expect(stored.data.equals(PDF)).toBe(true);
    const list = await env.t.call('GET', '/files', { key: env.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      { _shape: 'gateway', id: r.body.id, type: 'file', filename: 'paper.pdf', mime_type: 'application/pdf', size_bytes: PDF.length, created_at: expect.any(String), downloadable: false, provider: 'openai', byok_credential_id: expect.any(String) },
    ]);
    const one = await env.t.call('GET', `/files/${r.body.id}`, { key: env.key, headers: { 'user-agent': 'OpenAI/JS 5.0.0' } });
    expect(one.body).toMatchObject({ _shape: 'openai', id: r.body.id, object: 'file', bytes: PDF.length, purpose: 'assistants', provider: 'openai' });
    // The bytes are the provider's: not served here; nor counted against the workspace quota.
    const content = await env.t.call('GET', `/files/${r.body.id}/content`, { key: env.key });
    expect(content.status).toBe(400);
    expect(content.body.error.message).toMatch(/is stored on openai's Files API/);
    const ws = (await env.t.gw.svc.store.getKey(env.keyHash))!.workspace_id;
    expect(await env.t.gw.svc.store.workspaceFileBytes(ws)).toBe(0);
    // Without purpose, OpenAI's default for model inputs.
    const d = await upload('?provider=openai');
    expect(SIM_FILES.get(d.body.id)?.purpose).toBe('user_data');
    const all = await env.t.call('GET', '/files', { key: env.key });
    expect(all.body.data.map((f: any) => f.id)).toEqual([r.body.id, d.body.id]);
  });

  it('anthropic: Anthropic\'s headers and shape', async () => {
    expect((await env.t.call('POST', '/byok', { body: { provider: 'anthropic', key: SECRET_ANTHROPIC } })).status).toBe(201);
    const r = await upload('?provider=anthropic', {}, env.key, { 'anthropic-version': '2023-06-01' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ _shape: 'anthropic', type: 'file', filename: 'paper.pdf', size_bytes: PDF.length, downloadable: false });
    expect(SIM_FILES.get(r.body.id)).toMatchObject({ provider: 'anthropic', key: SECRET_ANTHROPIC });
  });

  it('DELETE /files/{id} deletes it on the provider with the credential that stored it', async () => {
    const r = await upload('?provider=openai', { purpose: 'user_data' });
    expect(SIM_FILES.has(r.body.id)).toBe(true);
    const del = await env.t.call('DELETE', `/files/${r.body.id}`, { key: env.key });
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(del.body).toEqual({ _shape: 'gateway', id: r.body.id, type: 'file_deleted', provider_deleted: true });
    expect(SIM_FILES.has(r.body.id)).toBe(false);
    expect((await env.t.call('GET', `/files/${r.body.id}`, { key: env.key })).status).toBe(404);
    // Anthropic's, in Anthropic's shape.
    const a = await upload('?provider=anthropic', {}, env.key, { 'anthropic-version': '2023-06-01' });
    const delA = await env.t.call('DELETE', `/files/${a.body.id}`, { key: env.key, headers: { 'anthropic-version': '2023-06-01' } });
    expect(delA.body).toEqual({ _shape: 'anthropic', id: a.body.id, type: 'file_deleted', provider_deleted: true });
    expect(SIM_FILES.has(a.body.id)).toBe(false);
  });

  it('a provider that no longer has the file: the record goes (provider_deleted false); one that refuses the key: 502, the record stays', async () => {
    const gone = await upload('?provider=openai', { purpose: 'user_data' });
    SIM_FILES.delete(gone.body.id);
    const del = await env.t.call('DELETE', `/files/${gone.body.id}`, { key: env.key, headers: { 'user-agent': 'OpenAI/JS 5.0.0' } });
    expect(del.body).toEqual({ _shape: 'openai', id: gone.body.id, object: 'file', deleted: true, provider_deleted: false });
    const kept = await upload('?provider=openai', { purpose: 'user_data' });
    env.sim.setKnobs('openai', { rejectKeys: [SECRET_OPENAI] });
    try {
      const refused = await env.t.call('DELETE', `/files/${kept.body.id}`, { key: env.key });
      expect(refused.status).toBe(502);
      expect(refused.body.error.message).toMatch(/OpenAI's Files API answered 401/);
      expect((await env.t.call('GET', `/files/${kept.body.id}`, { key: env.key })).status).toBe(200);
    } finally {
      env.sim.resetKnobs('openai');
    }
    expect((await env.t.call('DELETE', `/files/${kept.body.id}`, { key: env.key })).body.provider_deleted).toBe(true);
    expect(SIM_FILES.has(kept.body.id)).toBe(false);
  });

  it('a file named by its provider id in a chat file part passes through as sent (not looked up as a gateway file)', async () => {
    const r = await upload('?provider=openai', { purpose: 'user_data' });
    const chat = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: r.body.id } }, { type: 'text', text: 'summarize' }] }] } });
    expect(chat.status, JSON.stringify(chat.body)).toBe(200);
    expect(env.sim.stats('sim-a').lastBody).toMatchObject({ messages: [{ content: [{ type: 'file', file: { file_id: r.body.id } }, { type: 'text', text: 'summarize' }] }] });
  });

  it('deleting the workspace deletes its provider files there too', async () => {
    const ws = await env.t.call('POST', '/workspaces', { body: { name: 'Provider files', slug: 'provider-files' } });
    expect(ws.status, JSON.stringify(ws.body)).toBe(201);
    expect((await env.t.call('POST', '/byok', { body: { provider: 'openai', key: SECRET_OPENAI, workspace_id: 'provider-files' } })).status).toBe(201);
    const k = await env.t.call('POST', '/keys', { body: { name: 'ws key', workspace_id: 'provider-files' } });
    expect(k.status, JSON.stringify(k.body)).toBe(201);
    const r = await upload('?provider=openai', { purpose: 'user_data' }, k.body.key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(SIM_FILES.has(r.body.id)).toBe(true);
    expect((await env.t.call('DELETE', `/keys/${k.body.data.hash}`)).status).toBe(200);
    const del = await env.t.call('DELETE', `/workspaces/${ws.body.data?.id ?? ws.body.id}`);
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(SIM_FILES.has(r.body.id)).toBe(false);
    expect(await env.t.gw.svc.store.getFile(ws.body.data?.id ?? ws.body.id, r.body.id)).toBeNull();
  });

  it('the OpenAPI document describes the provider fields of files and deletions', async () => {
    const doc = (await (await fetch(`${env.t.api}/openapi.json`)).json()) as { paths: Record<string, any> };
    const shapes = doc.paths['/files/{file_id}'].get.responses['200'].content['application/json'].schema.anyOf as any[];
    const gateway = shapes.find((x) => x.properties?._shape?.const === 'gateway' || x.properties?._shape?.enum?.[0] === 'gateway');
    expect(gateway.properties.provider.enum).toEqual(['openai', 'anthropic']);
    expect(gateway.properties.byok_credential_id.type).toBe('string');
    const deleted = doc.paths['/files/{file_id}'].delete.responses['200'].content['application/json'].schema.anyOf as any[];
    for (const d of deleted) expect(d.properties.provider_deleted.type).toBe('boolean');
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
