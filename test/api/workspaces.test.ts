import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { expectError, expectStatus, sleep, UUID } from './util.js';

const SPEC_FIELDS = [
  'id',
  'name',
  'slug',
  'description',
  'default_text_model',
  'default_image_model',
  'default_provider_sort',
  'io_logging_api_key_ids',
  'io_logging_sampling_rate',
  'is_data_discount_logging_enabled',
  'is_observability_broadcast_enabled',
  'is_observability_io_logging_enabled',
  'created_by',
  'created_at',
  'updated_at',
  'default_guardrail_id',
].sort();

describe.each(BACKENDS)('Workspaces (%s)', (backend) => {
  let t: TestGateway;
  let n = 0;
  const slug = (p = 'ws') => `${p}-${++n}`;
  const create = (body: Record<string, unknown>) => t.call('POST', '/workspaces', { body });

  beforeAll(async () => {
    t = await startGateway(backend);
  });
  afterAll(async () => t?.close());

  it('creates a workspace (201) with the documented defaults for omitted fields', async () => {
    const s = slug();
    const res = await create({ name: 'Team A', slug: s });
    expectStatus(res, 201);
    const ws = res.body.data;
    expect(Object.keys(ws).sort()).toEqual(SPEC_FIELDS);
    expect(ws).toMatchObject({
      name: 'Team A',
      slug: s,
      description: null,
      default_text_model: null,
      default_image_model: null,
      default_provider_sort: null,
      io_logging_api_key_ids: null,
      io_logging_sampling_rate: 1,
      is_data_discount_logging_enabled: true,
      is_observability_broadcast_enabled: false,
      is_observability_io_logging_enabled: false,
      updated_at: null,
    });
    expect(ws.id).toMatch(UUID);
    expect(typeof ws.created_by).toBe('string');
    expect(ws.created_by.length).toBeGreaterThan(0);
    expect(new Date(ws.created_at).toISOString()).toBe(ws.created_at);

    const got = await t.call('GET', `/workspaces/${ws.id}`);
    expectStatus(got, 200);
    expect(got.body.data).toEqual(ws);
  });

  it('creates a workspace with every field set and returns them as given', async () => {
    const body = {
      name: 'Full',
      slug: slug('full'),
      description: 'All the fields',
      default_text_model: 'openai/gpt-4o',
      default_image_model: 'google/imagen',
      default_provider_sort: 'latency',
      io_logging_api_key_ids: [1, 2, 3],
      io_logging_sampling_rate: 0.25,
      is_data_discount_logging_enabled: false,
      is_observability_broadcast_enabled: true,
      is_observability_io_logging_enabled: true,
    };
    const res = await create(body);
    expectStatus(res, 201);
    expect(res.body.data).toMatchObject(body);
    const bySlug = await t.call('GET', `/workspaces/${body.slug}`);
    expect(bySlug.body.data).toEqual(res.body.data);
  });

  describe('limits and constraints (just inside succeeds, just outside → 400 naming the field)', () => {
    it('name: 1 to 100 characters', async () => {
      expectStatus(await create({ name: 'n', slug: slug() }), 201);
      expectStatus(await create({ name: 'n'.repeat(100), slug: slug() }), 201);
      expectError(await create({ name: '', slug: slug() }), 400, { field: 'name', rule: 'minLength' });
      expectError(await create({ name: 'n'.repeat(101), slug: slug() }), 400, { field: 'name', rule: 'maxLength' });
      expectError(await create({ slug: slug() }), 400, { field: 'name', rule: 'required' });
      expectError(await create({ name: 5, slug: slug() }), 400, { field: 'name', rule: 'type' });
    });

    it('slug: 1 to 50 characters matching ^[a-z0-9]+(?:-[a-z0-9]+)*$', async () => {
      expectStatus(await create({ name: 'x', slug: 'z' }), 201);
      const fifty = `s${n}`.padEnd(50, 'q');
      expect(fifty).toHaveLength(50);
      expectStatus(await create({ name: 'x', slug: fifty }), 201);
      expectError(await create({ name: 'x', slug: '' }), 400, { field: 'slug', rule: 'minLength' });
      expectError(await create({ name: 'x', slug: 'q'.repeat(51) }), 400, { field: 'slug', rule: 'maxLength' });
      expectError(await create({ name: 'x' }), 400, { field: 'slug', rule: 'required' });
      for (const good of ['a-b-c', '0-9', 'abc123', 'x1-y2']) expectStatus(await create({ name: 'x', slug: `${good}-${++n}` }), 201);
      for (const bad of ['Upper', 'a--b', '-a', 'a-', 'a_b', 'a b', 'a.b', 'é']) {
        expectError(await create({ name: 'x', slug: bad }), 400, { field: 'slug', rule: 'pattern' });
      }
    });

    it('description: at most 500 characters, nullable', async () => {
      expectStatus(await create({ name: 'x', slug: slug(), description: 'd'.repeat(500) }), 201);
      expectStatus(await create({ name: 'x', slug: slug(), description: null }), 201);
      expectStatus(await create({ name: 'x', slug: slug(), description: '' }), 201);
      expectError(await create({ name: 'x', slug: slug(), description: 'd'.repeat(501) }), 400, { field: 'description', rule: 'maxLength' });
    });

    it('io_logging_sampling_rate: 0.0001 to 1', async () => {
      for (const ok of [0.0001, 0.5, 1]) {
        const res = await create({ name: 'x', slug: slug(), io_logging_sampling_rate: ok });
        expectStatus(res, 201);
        expect(res.body.data.io_logging_sampling_rate).toBe(ok);
      }
      expectError(await create({ name: 'x', slug: slug(), io_logging_sampling_rate: 0.00009 }), 400, { field: 'io_logging_sampling_rate', rule: 'minimum' });
      expectError(await create({ name: 'x', slug: slug(), io_logging_sampling_rate: 0 }), 400, { field: 'io_logging_sampling_rate', rule: 'minimum' });
      expectError(await create({ name: 'x', slug: slug(), io_logging_sampling_rate: 1.0001 }), 400, { field: 'io_logging_sampling_rate', rule: 'maximum' });
      expectError(await create({ name: 'x', slug: slug(), io_logging_sampling_rate: '0.5' }), 400, { field: 'io_logging_sampling_rate', rule: 'type' });
    });

    it('default_provider_sort: price, throughput, latency, exacto or null', async () => {
      for (const ok of ['price', 'throughput', 'latency', 'exacto', null]) {
        const res = await create({ name: 'x', slug: slug(), default_provider_sort: ok });
        expectStatus(res, 201);
        expect(res.body.data.default_provider_sort).toBe(ok);
      }
      expectError(await create({ name: 'x', slug: slug(), default_provider_sort: 'cheapest' }), 400, { field: 'default_provider_sort', rule: 'enum' });
    });

    it('typed fields: io_logging_api_key_ids integers or null, booleans, model strings', async () => {
      expectStatus(await create({ name: 'x', slug: slug(), io_logging_api_key_ids: null }), 201);
      expectStatus(await create({ name: 'x', slug: slug(), io_logging_api_key_ids: [] }), 201);
      expectError(await create({ name: 'x', slug: slug(), io_logging_api_key_ids: [1.5] }), 400, { field: 'io_logging_api_key_ids[0]', rule: 'type' });
      expectError(await create({ name: 'x', slug: slug(), io_logging_api_key_ids: 'all' }), 400, { field: 'io_logging_api_key_ids', rule: 'type' });
      for (const f of ['is_data_discount_logging_enabled', 'is_observability_broadcast_enabled', 'is_observability_io_logging_enabled']) {
        expectError(await create({ name: 'x', slug: slug(), [f]: 'yes' }), 400, { field: f, rule: 'type' });
      }
      expectError(await create({ name: 'x', slug: slug(), default_text_model: 42 }), 400, { field: 'default_text_model', rule: 'type' });
      expectError(await create({ name: 'x', slug: slug(), default_image_model: [] }), 400, { field: 'default_image_model', rule: 'type' });
    });
  });

  it('a taken slug → 400 naming slug on create and on update (the reference lists no 409 for workspaces)', async () => {
    const s = slug('taken');
    expectStatus(await create({ name: 'first', slug: s }), 201);
    expectError(await create({ name: 'second', slug: s }), 400, { message: s, field: 'slug' });
    const other = await create({ name: 'other', slug: slug() });
    expectError(await t.call('PATCH', `/workspaces/${other.body.data.id}`, { body: { slug: s } }), 400, { field: 'slug' });
    expectError(await t.call('PATCH', `/workspaces/${other.body.data.id}`, { body: { slug: 'default' } }), 400, { field: 'slug' });
  });

  it('GET /workspaces lists oldest first with total_count, paged by offset and limit', async () => {
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      await sleep(3);
      created.push((await create({ name: `list ${i}`, slug: slug('list') })).body.data.id);
    }
    const all = await t.call('GET', '/workspaces?limit=100');
    expectStatus(all, 200);
    expect(all.body.total_count).toBe(all.body.data.length);
    const ids = all.body.data.map((w: { id: string }) => w.id);
    expect(all.body.data[0].slug).toBe('default');
    expect(ids.slice(-3)).toEqual(created);
    const times = all.body.data.map((w: { created_at: string }) => Date.parse(w.created_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    const page = await t.call('GET', `/workspaces?offset=${all.body.total_count - 2}&limit=1`);
    expect(page.body.data.map((w: { id: string }) => w.id)).toEqual([created[1]]);
    expect(page.body.total_count).toBe(all.body.total_count);
    const def = await t.call('GET', '/workspaces');
    expect(def.body.data.length).toBe(Math.min(50, all.body.total_count));

    expectError(await t.call('GET', '/workspaces?limit=0'), 400, { field: 'limit', rule: 'minimum' });
    expectError(await t.call('GET', '/workspaces?limit=101'), 400, { field: 'limit', rule: 'maximum' });
    expectError(await t.call('GET', '/workspaces?offset=-1'), 400, { field: 'offset', rule: 'minimum' });
    expectStatus(await t.call('GET', '/workspaces?limit=100&offset=0'), 200);
  });

  it('GET, PATCH and DELETE by id or by slug', async () => {
    const s = slug('crud');
    const ws = (await create({ name: 'crud', slug: s, description: 'before' })).body.data;

    const byId = await t.call('GET', `/workspaces/${ws.id}`);
    const bySlug = await t.call('GET', `/workspaces/${s}`);
    expect(byId.body.data).toEqual(ws);
    expect(bySlug.body.data).toEqual(ws);

    const patched = await t.call('PATCH', `/workspaces/${s}`, { body: { name: 'renamed', description: null, default_provider_sort: 'price', io_logging_sampling_rate: 0.5 } });
    expectStatus(patched, 200);
    expect(patched.body.data).toMatchObject({ id: ws.id, slug: s, name: 'renamed', description: null, default_provider_sort: 'price', io_logging_sampling_rate: 0.5, created_at: ws.created_at });
    expect(patched.body.data.updated_at).not.toBeNull();
    expect(Date.parse(patched.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(ws.created_at));
    // Fields not in the patch are kept.
    expect(patched.body.data.is_data_discount_logging_enabled).toBe(true);

    const newSlug = slug('moved');
    const moved = await t.call('PATCH', `/workspaces/${ws.id}`, { body: { slug: newSlug } });
    expectStatus(moved, 200);
    expect((await t.call('GET', `/workspaces/${newSlug}`)).body.data.id).toBe(ws.id);
    expectError(await t.call('GET', `/workspaces/${s}`), 404);

    const del = await t.call('DELETE', `/workspaces/${newSlug}`);
    expectStatus(del, 200);
    expect(del.body).toEqual({ deleted: true });
    expectError(await t.call('GET', `/workspaces/${ws.id}`), 404);

    const other = (await create({ name: 'by id', slug: slug() })).body.data;
    expectStatus(await t.call('DELETE', `/workspaces/${other.id}`), 200);
    expectError(await t.call('DELETE', `/workspaces/${other.id}`), 404);
  });

  it('a PATCH is seen at once by the in-memory workspace cache (no stale routing defaults)', async () => {
    const ws = (await create({ name: 'cached', slug: slug('cached'), default_provider_sort: 'price' })).body.data;
    expect((await t.gw.svc.workspaces.cached(ws.id))?.default_provider_sort).toBe('price');
    expectStatus(await t.call('PATCH', `/workspaces/${ws.id}`, { body: { default_provider_sort: 'latency', default_text_model: 'a/b' } }), 200);
    expect(await t.gw.svc.workspaces.cached(ws.id)).toMatchObject({ default_provider_sort: 'latency', default_text_model: 'a/b' });
    expectStatus(await t.call('DELETE', `/workspaces/${ws.id}`), 200);
    expect(await t.gw.svc.workspaces.cached(ws.id)).toBeNull();
  });

  it('PATCH validates like create, needs at least one field, and ignores unknown fields', async () => {
    const ws = (await create({ name: 'patch', slug: slug() })).body.data;
    const p = (body: unknown) => t.call('PATCH', `/workspaces/${ws.id}`, { body });
    expectError(await p({ name: 'n'.repeat(101) }), 400, { field: 'name', rule: 'maxLength' });
    expectError(await p({ name: '' }), 400, { field: 'name', rule: 'minLength' });
    expectError(await p({ slug: 'Bad Slug' }), 400, { field: 'slug', rule: 'pattern' });
    expectError(await p({ description: 'd'.repeat(501) }), 400, { field: 'description', rule: 'maxLength' });
    expectError(await p({ io_logging_sampling_rate: 2 }), 400, { field: 'io_logging_sampling_rate', rule: 'maximum' });
    expectError(await p({ default_provider_sort: 'random' }), 400, { field: 'default_provider_sort', rule: 'enum' });
    expectError(await p({}), 400);
    expectStatus(await p({ name: 'n'.repeat(100) }), 200);
    // Unknown fields never reach the database (no 500), and cannot turn a workspace into the default one.
    const odd = await p({ name: 'still fine', no_such_column: 1, is_default: true, id: 'x', created_by: 'someone' });
    expectStatus(odd, 200);
    expect(odd.body.data).toMatchObject({ id: ws.id, name: 'still fine', created_by: ws.created_by });
    expectStatus(await t.call('DELETE', `/workspaces/${ws.id}`), 200);
  });

  it('unknown workspace → 404 on GET, PATCH and DELETE', async () => {
    expectError(await t.call('GET', '/workspaces/no-such-ws'), 404);
    expectError(await t.call('GET', '/workspaces/00000000-0000-4000-8000-000000000000'), 404);
    expectError(await t.call('PATCH', '/workspaces/no-such-ws', { body: { name: 'x' } }), 404);
    expectError(await t.call('DELETE', '/workspaces/no-such-ws'), 404);
  });

  it('deleting a workspace with active keys is refused (400); once they are disabled it goes, with its keys and presets', async () => {
    const s = slug('busy');
    const ws = (await create({ name: 'busy', slug: s })).body.data;
    const k = await createInferenceKey(t, { name: 'in busy', workspace_id: s });
    const preset = await t.call('POST', `/presets/busy-preset/responses?workspace_id=${s}`, { body: { model: 'm/x' } });
    expectStatus(preset, 200);
    expect(preset.body.data.workspace_id).toBe(ws.id);

    expectError(await t.call('DELETE', `/workspaces/${s}`), 400, { message: /active key/ });
    expect((await t.call('GET', `/workspaces/${s}`)).status).toBe(200);

    expectStatus(await t.call('PATCH', `/keys/${k.hash}`, { body: { disabled: true } }), 200);
    expectStatus(await t.call('DELETE', `/workspaces/${s}`), 200);
    expectError(await t.call('GET', `/keys/${k.hash}`), 404);

    // Same slug again: a new, empty workspace (the old presets are gone).
    const again = await create({ name: 'busy again', slug: s });
    expectStatus(again, 201);
    expect(again.body.data.id).not.toBe(ws.id);
    expectError(await t.call('GET', `/presets/busy-preset?workspace_id=${s}`), 404);
    expect((await t.call('GET', `/presets?workspace_id=${s}`)).body.total_count).toBe(0);
  });

  it('the default workspace cannot be deleted (403), by slug or by id', async () => {
    const def = await t.call('GET', '/workspaces/default');
    expectStatus(def, 200);
    expectError(await t.call('DELETE', '/workspaces/default'), 403);
    expectError(await t.call('DELETE', `/workspaces/${def.body.data.id}`), 403);
    expectStatus(await t.call('GET', '/workspaces/default'), 200);
  });

  it('documented auth errors of POST /workspaces: 401 without a valid key, 403 for an inference key', async () => {
    const body = { name: 'auth', slug: slug() };
    expectError(await t.call('POST', '/workspaces', { key: null, body }), 401);
    expectError(await t.call('POST', '/workspaces', { key: 'sk-gw-v1-nope', body }), 401);
    const k = await createInferenceKey(t, { name: 'ws inference' });
    expectError(await t.call('POST', '/workspaces', { key: k.key, body }), 403, { message: 'Only management keys can perform this operation' });
    expectError(await t.call('GET', `/workspaces/${body.slug}`), 404);
  });
});
