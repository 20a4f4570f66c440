import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { hashSecret } from '../../src/core/keys.js';

describe.each(BACKENDS)('API keys (%s)', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway(backend);
  });
  afterAll(async () => t?.close());

  it('creates a key: 201, secret once, hash is the SHA-256 of the secret, every field present', async () => {
    const res = await t.call('POST', '/keys', { body: { name: 'svc', limit: 12.5, limit_reset: 'weekly', include_byok_in_limit: true } });
    expect(res.status).toBe(201);
    const { data, key } = res.body;
    expect(key).toMatch(/^sk-gw-v1-[0-9a-f]{64}$/);
    expect(data.hash).toBe(hashSecret(key));
    expect(data.label).toBe(`sk-gw-v1-${key.slice(9, 12)}...${key.slice(-4)}`);
    expect(data).toMatchObject({
      name: 'svc',
      disabled: false,
      limit: 12.5,
      limit_remaining: 12.5,
      limit_reset: 'weekly',
      include_byok_in_limit: true,
      usage: 0,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      byok_usage: 0,
      byok_usage_daily: 0,
      byok_usage_weekly: 0,
      byok_usage_monthly: 0,
      updated_at: null,
      expires_at: null,
      is_management_key: false,
    });
    expect(data.workspace_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof data.creator_user_id).toBe('string');
    expect(Date.parse(data.created_at)).not.toBeNaN();

    const got = await t.call('GET', `/keys/${data.hash}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(data);
    expect(JSON.stringify(got.body)).not.toContain(key);
  });

  it('lists keys of the default workspace, hides disabled ones unless asked, pages by offset', async () => {
    const a = await createInferenceKey(t, { name: 'list-a' });
    const b = await createInferenceKey(t, { name: 'list-b' });
    expect((await t.call('PATCH', `/keys/${b.hash}`, { body: { disabled: true } })).status).toBe(200);
    const list = await t.call('GET', '/keys');
    expect(list.status).toBe(200);
    const hashes = list.body.data.map((k: { hash: string }) => k.hash);
    expect(hashes).toContain(a.hash);
    expect(hashes).not.toContain(b.hash);
    const all = await t.call('GET', '/keys?include_disabled=true');
    expect(all.body.data.map((k: { hash: string }) => k.hash)).toContain(b.hash);
    const skipped = await t.call('GET', `/keys?include_disabled=true&offset=${all.body.data.length - 1}`);
    expect(skipped.body.data).toHaveLength(1);
    expect((await t.call('GET', '/keys?offset=-1')).status).toBe(400);
    expect((await t.call('GET', '/keys?workspace_id=nope')).status).toBe(404);
  });

  it('lists keys of another workspace by id or slug', async () => {
    const ws = await t.call('POST', '/workspaces', { body: { name: 'Keys WS', slug: 'keys-ws' } });
    expect(ws.status).toBe(201);
    const k = await createInferenceKey(t, { name: 'in-ws', workspace_id: ws.body.data.id });
    expect(k.data.workspace_id).toBe(ws.body.data.id);
    const bySlug = await t.call('GET', '/keys?workspace_id=keys-ws');
    expect(bySlug.body.data.map((x: { hash: string }) => x.hash)).toEqual([k.hash]);
  });

  it('patches fields and rejects bad patches', async () => {
    const k = await createInferenceKey(t, { name: 'patch-me' });
    const res = await t.call('PATCH', `/keys/${k.hash}`, { body: { name: 'renamed', limit: 3, limit_reset: 'monthly', include_byok_in_limit: true } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'renamed', limit: 3, limit_reset: 'monthly', include_byok_in_limit: true, limit_remaining: 3 });
    expect(res.body.data.updated_at).not.toBeNull();
    const cleared = await t.call('PATCH', `/keys/${k.hash}`, { body: { limit: null, limit_reset: null } });
    expect(cleared.body.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null });

    const bad = await t.call('PATCH', `/keys/${k.hash}`, { body: { limit_reset: 'yearly' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(400);
    expect(bad.body.error.message).toContain('limit_reset');
    expect((await t.call('PATCH', `/keys/${k.hash}`, { body: {} })).status).toBe(400);
    expect((await t.call('PATCH', `/keys/${k.hash}`, { body: { limit: -1 } })).status).toBe(400);
    expect((await t.call('PATCH', `/keys/${'0'.repeat(64)}`, { body: { name: 'x' } })).status).toBe(404);
  });

  it('validates creation: name required, limit_reset enum, UTC expires_at in the future, known workspace and creator', async () => {
    const missing = await t.call('POST', '/keys', { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/name is required/);
    expect((await t.call('POST', '/keys', { body: { name: 'x', limit_reset: 'hourly' } })).body.error.message).toMatch(/limit_reset must be one of: daily, weekly, monthly/);
    const tz = await t.call('POST', '/keys', { body: { name: 'x', expires_at: '2099-01-01T00:00:00+02:00' } });
    expect(tz.status).toBe(400);
    expect(tz.body.error.message).toContain('expires_at');
    const past = await t.call('POST', '/keys', { body: { name: 'x', expires_at: '2001-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    expect((await t.call('POST', '/keys', { body: { name: 'x', workspace_id: 'missing-ws' } })).status).toBe(404);
    expect((await t.call('POST', '/keys', { body: { name: 'x', creator_user_id: 'user_missing' } })).status).toBe(400);
    expect((await t.call('POST', '/keys', { body: { name: 'x', limit: 'ten' } })).status).toBe(400);
  });

  it('enforces expires_at: an expired key gets 401', async () => {
    // 3 s of life (it was 1.5 s, which a loaded machine could spend before the first call); then waits for its end.
    const expiresAt = Date.now() + 3_000;
    const k = await createInferenceKey(t, { name: 'short-lived', expires_at: new Date(expiresAt).toISOString() });
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, expiresAt + 200 - Date.now()));
    const res = await t.call('GET', '/key', { key: k.key });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/expired/);
  });

  it('PATCH expires_at (extension): a new UTC expiry in the future takes effect at once; null clears it; the past or a zone is refused', async () => {
    const k = await createInferenceKey(t, { name: 're-expiring', expires_at: '2099-01-01T00:00:00Z' });
    const later = await t.call('PATCH', `/keys/${k.hash}`, { body: { expires_at: '2099-06-30T12:00:00Z' } });
    expect(later.status).toBe(200);
    expect(later.body.data.expires_at).toBe('2099-06-30T12:00:00.000Z');
    const never = await t.call('PATCH', `/keys/${k.hash}`, { body: { expires_at: null } });
    expect(never.body.data.expires_at).toBeNull();
    const past = await t.call('PATCH', `/keys/${k.hash}`, { body: { expires_at: '2001-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    expect(past.body.error.message).toContain('expires_at');
    expect((await t.call('PATCH', `/keys/${k.hash}`, { body: { expires_at: '2099-01-01T00:00:00+02:00' } })).status).toBe(400);
    expect((await t.call('GET', `/keys/${k.hash}`)).body.data.expires_at).toBeNull();
    // Shortened to a moment from now: the key stops working then (the key cache follows the change).
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    // 3 s ahead, so that the PATCH reaches the gateway before that moment even on a loaded machine (else: 400, past).
    const shortened = Date.now() + 3_000;
    expect((await t.call('PATCH', `/keys/${k.hash}`, { body: { expires_at: new Date(shortened).toISOString() } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, shortened + 200 - Date.now()));
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(401);
  });

  it('GET /key describes the calling key without its identity fields', async () => {
    const k = await createInferenceKey(t, { name: 'me', limit: 5 });
    const res = await t.call('GET', '/key', { key: k.key });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ label: k.data.label, limit: 5, limit_remaining: 5, is_management_key: false, is_provisioning_key: false, is_free_tier: false });
    expect(res.body.data.hash).toBeUndefined();
    const mgmt = await t.call('GET', '/key');
    expect(mgmt.body.data.is_management_key).toBe(true);
  });

  it('disabling or deleting a key takes effect at once (cache invalidated)', async () => {
    const k = await createInferenceKey(t, { name: 'cached' });
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    await t.call('PATCH', `/keys/${k.hash}`, { body: { disabled: true } });
    const disabled = await t.call('GET', '/key', { key: k.key });
    expect(disabled.status).toBe(401);
    expect(disabled.body.error.message).toMatch(/disabled/);
    await t.call('PATCH', `/keys/${k.hash}`, { body: { disabled: false } });
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    const del = await t.call('DELETE', `/keys/${k.hash}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: true });
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(401);
    expect((await t.call('GET', `/keys/${k.hash}`)).status).toBe(404);
    expect((await t.call('DELETE', `/keys/${k.hash}`)).status).toBe(404);
  });

  it('refuses to disable or delete the last active management key', async () => {
    const self = await t.call('GET', '/keys?include_disabled=true');
    const mgmt = self.body.data.filter((k: { is_management_key: boolean; disabled: boolean }) => k.is_management_key && !k.disabled);
    expect(mgmt).toHaveLength(1);
    expect((await t.call('PATCH', `/keys/${mgmt[0].hash}`, { body: { disabled: true } })).status).toBe(409);
    expect((await t.call('DELETE', `/keys/${mgmt[0].hash}`)).status).toBe(409);
    // With a second management key, the first can go.
    const second = await t.call('POST', '/keys', { body: { name: 'second admin', management: true } });
    expect(second.status).toBe(201);
    expect(second.body.data.is_management_key).toBe(true);
    expect((await t.call('GET', '/keys', { key: second.body.key })).status).toBe(200);
  });

  it('a malformed hash names no key: 404 (the spec lists 401, 404, 429, 500 here); an uppercase hash finds the key', async () => {
    const res = await t.call('GET', '/keys/not-a-hash');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe(404);
    const created = await t.call('POST', '/keys', { body: { name: 'upper' } });
    const hash: string = created.body.data.hash;
    const upper = await t.call('GET', `/keys/${hash.toUpperCase()}`);
    expect(upper.status).toBe(200);
    expect(upper.body.data.hash).toBe(hash);
  });
});

describe('the x-api-key header (Anthropic SDK default)', () => {
  it('authenticates like a bearer token; Authorization wins when both are sent', async () => {
    const t = await startGateway('sqlite');
    try {
      const k = await createInferenceKey(t, { name: 'x-api-key' });
      const viaHeader = await t.call('GET', '/key', { key: null, headers: { 'x-api-key': k.key } });
      expect(viaHeader.status).toBe(200);
      expect(viaHeader.body.data.label).toBe(k.data.label);
      expect((await t.call('GET', '/key', { key: null, headers: { 'x-api-key': 'sk-gw-v1-nope' } })).status).toBe(401);
      const both = await t.call('GET', '/key', { key: 'sk-gw-v1-wrong', headers: { 'x-api-key': k.key } });
      expect(both.status).toBe(401);
    } finally {
      await t.close();
    }
  });
});
