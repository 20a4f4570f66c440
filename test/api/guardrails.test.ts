/**
 * Guardrails and organization settings through the API, on both backends: CRUD with the reference's shapes,
 * validation, assignments (bulk add and remove, listing, one guardrail per key or member), the workspace default
 * guardrail, cleanup when keys, members and workspaces go, the organization settings extension, and the 401/403 matrix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { expectError, expectStatus, UUID } from './util.js';

const MANAGEMENT_ONLY = 'Only management keys can perform this operation';

const GUARDRAIL_FIELDS = [
  'id',
  'name',
  'description',
  'workspace_id',
  'limit_usd',
  'reset_interval',
  'include_byok_in_budgets',
  'allowed_models',
  'ignored_models',
  'allowed_providers',
  'ignored_providers',
  'enforce_zdr',
  'enforce_zdr_anthropic',
  'enforce_zdr_openai',
  'enforce_zdr_google',
  'enforce_zdr_xai',
  'enforce_zdr_other',
  'enable_free_model_publication',
  'enable_free_model_training',
  'enable_paid_model_training',
  'content_filters',
  'content_filter_builtins',
  // Our extensions: rate limits (docs/guardrails.md, "Rate limits") and the workspace default flag.
  'rate_limit',
  'is_workspace_default',
  'created_at',
  'updated_at',
].sort();

const OPERATIONS = [
  'GET /guardrails',
  'POST /guardrails',
  'GET /guardrails/{id}',
  'PATCH /guardrails/{id}',
  'DELETE /guardrails/{id}',
  'GET /guardrails/{id}/assignments/keys',
  'POST /guardrails/{id}/assignments/keys',
  'POST /guardrails/{id}/assignments/keys/remove',
  'GET /guardrails/{id}/assignments/members',
  'POST /guardrails/{id}/assignments/members',
  'POST /guardrails/{id}/assignments/members/remove',
  'GET /guardrails/assignments/keys',
  'GET /guardrails/assignments/members',
  'GET /organization/settings',
  'PATCH /organization/settings',
];

describe.each(BACKENDS)('Guardrails and organization settings API (%s)', (backend) => {
  let t: TestGateway;
  let seq = 0;
  const create = (body: Record<string, unknown>) => t.call('POST', '/guardrails', { body });
  const newGuardrail = async (body: Record<string, unknown> = {}) => {
    const res = await create({ name: `g-${++seq}`, ...body });
    expectStatus(res, 201);
    return res.body.data;
  };
  const newMember = async () => {
    const res = await t.call('POST', '/organization/members', { body: { email: `m${++seq}-${backend}@example.com` } });
    expectStatus(res, 201);
    return res.body.data.id as string;
  };
  const newWorkspace = async () => {
    const res = await t.call('POST', '/workspaces', { body: { name: 'WS', slug: `gw-${backend}-${++seq}` } });
    expectStatus(res, 201);
    return res.body.data;
  };

  beforeAll(async () => {
    t = await startGateway(backend);
  });
  afterAll(async () => t?.close());

  describe('CRUD', () => {
    it('creates a guardrail (201) with the reference fields and defaults, in the default workspace', async () => {
      const res = await create({ name: 'Production' });
      expectStatus(res, 201);
      const g = res.body.data;
      expect(Object.keys(g).sort()).toEqual(GUARDRAIL_FIELDS);
      expect(g.id).toMatch(UUID);
      const def = (await t.call('GET', '/workspaces/default')).body.data;
      expect(g).toMatchObject({
        name: 'Production',
        description: null,
        workspace_id: def.id,
        limit_usd: null,
        reset_interval: null,
        include_byok_in_budgets: false,
        allowed_models: null,
        ignored_models: null,
        allowed_providers: null,
        ignored_providers: null,
        enforce_zdr: false,
        enforce_zdr_openai: false,
        enable_free_model_training: null,
        content_filters: null,
        content_filter_builtins: null,
        rate_limit: null,
        is_workspace_default: false,
        updated_at: null,
      });
      expect(new Date(g.created_at).toISOString()).toBe(g.created_at);
      const got = await t.call('GET', `/guardrails/${g.id}`);
      expectStatus(got, 200);
      expect(got.body.data).toEqual(g);
    });

    it('creates with every field; model entries are stored as canonical slugs; enforce_zdr fills unset vendors', async () => {
      const res = await create({
        name: 'Full',
        description: 'All fields',
        limit_usd: 50,
        reset_interval: 'monthly',
        include_byok_in_budgets: true,
        allowed_models: ['openai/gpt-4o-mini', 'anthropic/claude-haiku-4.5'],
        ignored_models: ['openai/gpt-4o'],
        allowed_providers: ['openai', 'anthropic'],
        ignored_providers: ['groq'],
        enforce_zdr: true,
        enforce_zdr_google: false,
        enable_free_model_publication: false,
        enable_free_model_training: true,
        enable_paid_model_training: false,
      });
      expectStatus(res, 201);
      const g = res.body.data;
      expect(g).toMatchObject({
        description: 'All fields',
        limit_usd: 50,
        reset_interval: 'monthly',
        include_byok_in_budgets: true,
        allowed_providers: ['openai', 'anthropic'],
        ignored_providers: ['groq'],
        enforce_zdr: null,
        enforce_zdr_anthropic: true,
        enforce_zdr_openai: true,
        enforce_zdr_google: false,
        enforce_zdr_xai: true,
        enforce_zdr_other: true,
        enable_free_model_publication: false,
        enable_free_model_training: true,
        enable_paid_model_training: false,
      });
      expect(g.allowed_models[0]).toBe('openai/gpt-4o-mini-2024-07-18');
      expect(g.allowed_models).toHaveLength(2);
      expect(g.ignored_models).toEqual(['openai/gpt-4o-2024-08-06']);
    });

    it('lists the guardrails of a workspace (default workspace unless workspace_id), oldest first, with paging', async () => {
      const ws = await newWorkspace();
      const a = await newGuardrail({ workspace_id: ws.id });
      const b = await newGuardrail({ workspace_id: ws.slug });
      const list = await t.call('GET', `/guardrails?workspace_id=${ws.id}`);
      expectStatus(list, 200);
      expect(list.body.total_count).toBe(2);
      expect(list.body.data.map((g: any) => g.id)).toEqual([a.id, b.id]);
      const paged = await t.call('GET', `/guardrails?workspace_id=${ws.slug}&offset=1&limit=1`);
      expect(paged.body.data.map((g: any) => g.id)).toEqual([b.id]);
      expect(paged.body.total_count).toBe(2);
      const def = await t.call('GET', '/guardrails');
      expect(def.body.data.every((g: any) => g.workspace_id !== ws.id)).toBe(true);
      expectError(await t.call('GET', '/guardrails?limit=101'), 400, { field: 'limit' });
      expectError(await t.call('GET', '/guardrails?workspace_id=no-such-ws'), 404);
    });

    it('PATCH replaces the fields given (lists replaced, null clears) and sets updated_at', async () => {
      const g = await newGuardrail({ allowed_providers: ['openai'], limit_usd: 10 });
      const res = await t.call('PATCH', `/guardrails/${g.id}`, { body: { name: 'Renamed', allowed_providers: ['anthropic', 'groq'], limit_usd: null, enforce_zdr_openai: true } });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({ id: g.id, name: 'Renamed', allowed_providers: ['anthropic', 'groq'], limit_usd: null, enforce_zdr_openai: true, enforce_zdr_anthropic: false, enforce_zdr: null });
      expect(res.body.data.updated_at).not.toBeNull();
      expect(res.body.data.created_at).toBe(g.created_at);
      const cleared = await t.call('PATCH', `/guardrails/${g.id}`, { body: { allowed_providers: null } });
      expect(cleared.body.data.allowed_providers).toBeNull();
      expect((await t.call('GET', `/guardrails/${g.id}`)).body.data.name).toBe('Renamed');
    });

    it('DELETE removes it (and its assignments); unknown ids → 404', async () => {
      const g = await newGuardrail();
      const k = await createInferenceKey(t, { name: 'del' });
      expectStatus(await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: { key_hashes: [k.hash] } }), 200);
      const del = await t.call('DELETE', `/guardrails/${g.id}`);
      expectStatus(del, 200);
      expect(del.body).toEqual({ deleted: true });
      expectError(await t.call('GET', `/guardrails/${g.id}`), 404);
      expectError(await t.call('DELETE', `/guardrails/${g.id}`), 404);
      expectError(await t.call('PATCH', `/guardrails/${g.id}`, { body: { name: 'x' } }), 404);
      const all = await t.call('GET', '/guardrails/assignments/keys?limit=100');
      expect(all.body.data.some((a: any) => a.guardrail_id === g.id)).toBe(false);
    });
  });

  describe('validation', () => {
    it('rejects bad bodies with 400 naming the field and the rule', async () => {
      expectError(await create({}), 400, { field: 'name', rule: 'required' });
      expectError(await create({ name: '' }), 400, { field: 'name', rule: 'minLength' });
      expectError(await create({ name: 'x'.repeat(201) }), 400, { field: 'name', rule: 'maxLength' });
      expectError(await create({ name: 'x', description: 'd'.repeat(1001) }), 400, { field: 'description', rule: 'maxLength' });
      expectError(await create({ name: 'x', limit_usd: -1 }), 400, { field: 'limit_usd', rule: 'minimum' });
      expectError(await create({ name: 'x', limit_usd: 'ten' }), 400, { field: 'limit_usd' });
      expectError(await create({ name: 'x', reset_interval: 'hourly' }), 400, { field: 'reset_interval', rule: 'enum' });
      expectError(await create({ name: 'x', allowed_providers: [] }), 400, { field: 'allowed_providers', rule: 'minItems' });
      expectError(await create({ name: 'x', allowed_models: 'openai/gpt-4o' }), 400, { field: 'allowed_models', rule: 'type' });
      expectError(await create({ name: 'x', enforce_zdr_openai: 'yes' }), 400, { field: 'enforce_zdr_openai' });
      expectError(await t.call('PATCH', `/guardrails/${(await newGuardrail()).id}`, { body: {} }), 400, { rule: 'minProperties' });
    });

    it('unknown providers and models → 400 naming the entry; unsafe content filter patterns → 400', async () => {
      expectError(await create({ name: 'x', allowed_providers: ['openai', 'no-such-provider'] }), 400, { field: 'allowed_providers[1]', message: 'no-such-provider' });
      expectError(await create({ name: 'x', ignored_models: ['nobody/nothing'] }), 400, { field: 'ignored_models[0]', message: 'nobody/nothing' });
      // Content filters are supported now (test/guardrails/content-api.test.ts); an unsafe pattern is refused.
      expectError(await create({ name: 'x', content_filters: [{ pattern: '(a+)+$', action: 'block' }] }), 400, { field: 'content_filters[0].pattern', message: 'invalid_regex_pattern' });
      expectStatus(await create({ name: 'nulls ok', content_filters: null, content_filter_builtins: null }), 201);
      // Provider entries also match display names and endpoint tags, case-insensitively.
      expectStatus(await create({ name: 'names', allowed_providers: ['OpenAI', 'Anthropic'] }), 201);
      expectError(await create({ name: 'x', workspace_id: 'no-such-workspace' }), 404);
    });
  });

  describe('assignments', () => {
    it('assigns keys in bulk, lists them (per guardrail and overall), removes them; counts are exact', async () => {
      const g = await newGuardrail();
      const k1 = await createInferenceKey(t, { name: 'k1' });
      const k2 = await createInferenceKey(t, { name: 'k2' });
      const add = await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: { key_hashes: [k1.hash, k2.hash] } });
      expectStatus(add, 200);
      expect(add.body).toEqual({ assigned_count: 2 });
      // Assigning again changes nothing.
      expect((await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: { key_hashes: [k1.hash] } })).body).toEqual({ assigned_count: 0 });
      const list = await t.call('GET', `/guardrails/${g.id}/assignments/keys`);
      expectStatus(list, 200);
      expect(list.body.total_count).toBe(2);
      const a = list.body.data.find((x: any) => x.key_hash === k1.hash);
      expect(Object.keys(a).sort()).toEqual(['assigned_by', 'created_at', 'guardrail_id', 'id', 'key_hash', 'key_label', 'key_name'].sort());
      expect(a).toMatchObject({ guardrail_id: g.id, key_name: 'k1', key_label: k1.data.label });
      expect(a.id).toMatch(UUID);
      expect(typeof a.assigned_by).toBe('string');
      const all = await t.call('GET', '/guardrails/assignments/keys?limit=100');
      expect(all.body.data.filter((x: any) => x.guardrail_id === g.id)).toHaveLength(2);
      const rm = await t.call('POST', `/guardrails/${g.id}/assignments/keys/remove`, { body: { key_hashes: [k1.hash, '0'.repeat(64)] } });
      expectStatus(rm, 200);
      expect(rm.body).toEqual({ unassigned_count: 1 });
      expect((await t.call('GET', `/guardrails/${g.id}/assignments/keys`)).body.total_count).toBe(1);
    });

    it('a key holds at most one guardrail: a new assignment replaces the old one', async () => {
      const g1 = await newGuardrail();
      const g2 = await newGuardrail();
      const k = await createInferenceKey(t, { name: 'one' });
      await t.call('POST', `/guardrails/${g1.id}/assignments/keys`, { body: { key_hashes: [k.hash] } });
      expect((await t.call('POST', `/guardrails/${g2.id}/assignments/keys`, { body: { key_hashes: [k.hash] } })).body).toEqual({ assigned_count: 1 });
      expect((await t.call('GET', `/guardrails/${g1.id}/assignments/keys`)).body.total_count).toBe(0);
      expect((await t.call('GET', `/guardrails/${g2.id}/assignments/keys`)).body.data[0].key_hash).toBe(k.hash);
      // Removing from the wrong guardrail removes nothing.
      expect((await t.call('POST', `/guardrails/${g1.id}/assignments/keys/remove`, { body: { key_hashes: [k.hash] } })).body).toEqual({ unassigned_count: 0 });
    });

    it('assigns members in bulk (one guardrail each), lists them with organization_id, removes them', async () => {
      const g1 = await newGuardrail();
      const g2 = await newGuardrail();
      const m1 = await newMember();
      const m2 = await newMember();
      expect((await t.call('POST', `/guardrails/${g1.id}/assignments/members`, { body: { member_user_ids: [m1, m2] } })).body).toEqual({ assigned_count: 2 });
      const list = await t.call('GET', `/guardrails/${g1.id}/assignments/members`);
      expectStatus(list, 200);
      expect(list.body.total_count).toBe(2);
      const a = list.body.data[0];
      expect(Object.keys(a).sort()).toEqual(['assigned_by', 'created_at', 'guardrail_id', 'id', 'organization_id', 'user_id'].sort());
      expect(a.organization_id).toMatch(/^org_/);
      expect((await t.call('POST', `/guardrails/${g2.id}/assignments/members`, { body: { member_user_ids: [m2] } })).body).toEqual({ assigned_count: 1 });
      expect((await t.call('GET', `/guardrails/${g1.id}/assignments/members`)).body.data.map((x: any) => x.user_id)).toEqual([m1]);
      const all = await t.call('GET', '/guardrails/assignments/members?limit=100');
      expect(all.body.data.filter((x: any) => x.user_id === m1 || x.user_id === m2)).toHaveLength(2);
      expect((await t.call('POST', `/guardrails/${g1.id}/assignments/members/remove`, { body: { member_user_ids: [m1] } })).body).toEqual({ unassigned_count: 1 });
    });

    it('validates assignment bodies: unknown keys or members → 400 naming the entry; unknown guardrail → 404', async () => {
      const g = await newGuardrail();
      expectError(await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: {} }), 400, { field: 'key_hashes', rule: 'required' });
      expectError(await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: { key_hashes: [] } }), 400, { field: 'key_hashes', rule: 'minItems' });
      expectError(await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: { key_hashes: ['f'.repeat(64)] } }), 400, { field: 'key_hashes[0]' });
      expectError(await t.call('POST', `/guardrails/${g.id}/assignments/members`, { body: { member_user_ids: ['user_nobody'] } }), 400, { field: 'member_user_ids[0]' });
      expectError(await t.call('POST', `/guardrails/${g.id}/assignments/members/remove`, { body: { member_user_ids: [] } }), 400, { field: 'member_user_ids', rule: 'minItems' });
      const k = await createInferenceKey(t, { name: 'x' });
      const missing = '00000000-0000-4000-8000-000000000000';
      expectError(await t.call('POST', `/guardrails/${missing}/assignments/keys`, { body: { key_hashes: [k.hash] } }), 404);
      expectError(await t.call('GET', `/guardrails/${missing}/assignments/keys`), 404);
      expectError(await t.call('GET', `/guardrails/${missing}/assignments/members`), 404);
      expectError(await t.call('GET', '/guardrails/assignments/keys?limit=0'), 400, { field: 'limit' });
    });

    it('deleting a key or a member removes its assignment', async () => {
      const g = await newGuardrail();
      const k = await createInferenceKey(t, { name: 'gone' });
      const m = await newMember();
      await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: { key_hashes: [k.hash] } });
      await t.call('POST', `/guardrails/${g.id}/assignments/members`, { body: { member_user_ids: [m] } });
      expectStatus(await t.call('DELETE', `/keys/${k.hash}`), 200);
      expectStatus(await t.call('DELETE', `/organization/members/${m}`), 200);
      expect((await t.call('GET', `/guardrails/${g.id}/assignments/keys`)).body.total_count).toBe(0);
      expect((await t.call('GET', `/guardrails/${g.id}/assignments/members`)).body.total_count).toBe(0);
    });
  });

  describe('workspace default guardrail', () => {
    it('has an id derived from the workspace, is 404 until configured, is materialized by PATCH, keeps its name', async () => {
      const ws = await newWorkspace();
      const id = ws.default_guardrail_id;
      expect(id).toMatch(UUID);
      expect((await t.call('GET', `/workspaces/${ws.id}`)).body.data.default_guardrail_id).toBe(id);
      expectError(await t.call('GET', `/guardrails/${id}`), 404, { message: 'not been configured' });
      expect((await t.call('GET', `/guardrails?workspace_id=${ws.id}`)).body.total_count).toBe(0);
      expectError(await t.call('PATCH', `/guardrails/${id}`, { body: { name: 'Mine' } }), 400, { field: 'name' });
      const res = await t.call('PATCH', `/guardrails/${id}`, { body: { allowed_providers: ['openai'], limit_usd: 5, reset_interval: 'daily' } });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({ id, name: `Workspace ${ws.id} Default`, workspace_id: ws.id, is_workspace_default: true, allowed_providers: ['openai'], limit_usd: 5 });
      expectStatus(await t.call('GET', `/guardrails/${id}`), 200);
      expect((await t.call('GET', `/guardrails?workspace_id=${ws.id}`)).body.data.map((g: any) => g.id)).toEqual([id]);
      const again = await t.call('PATCH', `/guardrails/${id}`, { body: { allowed_providers: ['anthropic'] } });
      expect(again.body.data).toMatchObject({ allowed_providers: ['anthropic'], limit_usd: 5 });
      expectError(await t.call('PATCH', `/guardrails/${id}`, { body: { name: 'Other' } }), 400, { field: 'name' });
      // It covers the whole workspace: it is not assignable.
      const k = await createInferenceKey(t, { name: 'w', workspace_id: ws.id });
      expectError(await t.call('POST', `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [k.hash] } }), 400);
      // Another workspace has another default guardrail id.
      expect((await newWorkspace()).default_guardrail_id).not.toBe(id);
    });

    it('deleting a workspace deletes its guardrails and their assignments', async () => {
      const ws = await newWorkspace();
      const g = await newGuardrail({ workspace_id: ws.id });
      await t.call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { body: { enforce_zdr: true } });
      const k = await createInferenceKey(t, { name: 'elsewhere' });
      await t.call('POST', `/guardrails/${g.id}/assignments/keys`, { body: { key_hashes: [k.hash] } });
      expectStatus(await t.call('DELETE', `/workspaces/${ws.id}`), 200);
      expectError(await t.call('GET', `/guardrails/${g.id}`), 404);
      expectError(await t.call('GET', `/guardrails/${ws.default_guardrail_id}`), 404);
      const all = await t.call('GET', '/guardrails/assignments/keys?limit=100');
      expect(all.body.data.some((a: any) => a.key_hash === k.hash)).toBe(false);
    });
  });

  describe('organization settings (extension)', () => {
    it('GET returns the defaults; PATCH validates, normalizes and persists', async () => {
      const get = await t.call('GET', '/organization/settings');
      expectStatus(get, 200);
      expect(get.body.data).toEqual({
        allowed_providers: null,
        ignored_providers: null,
        allowed_models: null,
        ignored_models: null,
        default_provider_sort: null,
        data_collection: 'allow',
        enforce_zdr: false,
        model_aliases: null,
        updated_at: null,
      });
      const res = await t.call('PATCH', '/organization/settings', {
        body: { allowed_providers: ['openai', 'anthropic'], ignored_models: ['openai/gpt-4o'], default_provider_sort: 'price', data_collection: 'deny', enforce_zdr: true },
      });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({
        allowed_providers: ['openai', 'anthropic'],
        ignored_providers: null,
        ignored_models: ['openai/gpt-4o-2024-08-06'],
        default_provider_sort: 'price',
        data_collection: 'deny',
        enforce_zdr: true,
      });
      expect(res.body.data.updated_at).not.toBeNull();
      expect((await t.call('GET', '/organization/settings')).body.data).toEqual(res.body.data);
      // Empty lists and null clear a list.
      const cleared = await t.call('PATCH', '/organization/settings', { body: { allowed_providers: [], ignored_models: null, data_collection: 'allow', enforce_zdr: false, default_provider_sort: null } });
      expect(cleared.body.data).toMatchObject({ allowed_providers: null, ignored_models: null, data_collection: 'allow', enforce_zdr: false, default_provider_sort: null });
    });

    it('PATCH rejects bad values with 400 naming the field', async () => {
      const patch = (body: unknown) => t.call('PATCH', '/organization/settings', { body });
      expectError(await patch({}), 400, { rule: 'minProperties' });
      expectError(await patch({ data_collection: 'sometimes' }), 400, { field: 'data_collection', rule: 'enum' });
      expectError(await patch({ default_provider_sort: 'random' }), 400, { field: 'default_provider_sort', rule: 'enum' });
      expectError(await patch({ enforce_zdr: 'yes' }), 400, { field: 'enforce_zdr' });
      expectError(await patch({ allowed_providers: ['nope'] }), 400, { field: 'allowed_providers[0]' });
      expectError(await patch({ ignored_models: ['openai/gpt-4o', 'x/y'] }), 400, { field: 'ignored_models[1]' });
      expect((await t.call('GET', '/organization/settings')).body.data.allowed_providers).toBeNull();
    });
  });

  describe('authentication', () => {
    let inference: { key: string; hash: string };
    beforeAll(async () => {
      inference = await createInferenceKey(t, { name: 'matrix' });
    });
    const fill = (p: string) => p.replace('{id}', '00000000-0000-4000-8000-000000000000');

    it('the OpenAPI document lists every guardrail and settings operation', async () => {
      const doc = (await t.call('GET', '/openapi.json', { key: null })).body;
      const ops: string[] = [];
      for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) for (const m of Object.keys(item)) ops.push(`${m.toUpperCase()} ${path}`);
      expect(ops).toEqual(expect.arrayContaining(OPERATIONS));
    });

    it('no key or an unknown key → 401; an inference key → 403; a management key passes', async () => {
      for (const op of OPERATIONS) {
        const [method, path] = op.split(' ');
        const body = method === 'GET' || method === 'DELETE' ? undefined : {};
        expectError(await t.call(method, fill(path), { key: null, body }), 401);
        expectError(await t.call(method, fill(path), { key: 'sk-gw-v1-' + 'f'.repeat(64), body }), 401);
        const inf = await t.call(method, fill(path), { key: inference.key, body });
        expectError(inf, 403, { message: MANAGEMENT_ONLY });
        const mgmt = await t.call(method, fill(path), { body });
        expect([401, 403], `${op}: ${JSON.stringify(mgmt.body)}`).not.toContain(mgmt.status);
        expect(mgmt.status, `${op}: ${JSON.stringify(mgmt.body)}`).toBeLessThan(500);
        if (mgmt.status === 404) expect(mgmt.body.error.message).not.toMatch(/^No route/);
      }
    });

    it('GET /models/user needs a key (either kind)', async () => {
      expectError(await t.call('GET', '/models/user', { key: null }), 401);
      expectStatus(await t.call('GET', '/models/user', { key: inference.key }), 200);
      expectStatus(await t.call('GET', '/models/user'), 200);
    });
  });
});
