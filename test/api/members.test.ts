import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { expectError, expectStatus, sleep } from './util.js';

const MEMBER_FIELDS = ['id', 'email', 'first_name', 'last_name', 'role'].sort();

describe.each(BACKENDS)('Organization members (%s)', (backend) => {
  let t: TestGateway;
  let owner: { id: string; email: string };
  let n = 0;
  const email = (p = 'm') => `${p}${++n}@example.com`;
  const add = (body: Record<string, unknown>) => t.call('POST', '/organization/members', { body });

  beforeAll(async () => {
    t = await startGateway(backend);
    owner = (await t.call('GET', '/organization/members')).body.data[0];
  });
  afterAll(async () => t?.close());

  it('starts with the owner created at first start (org:admin)', async () => {
    const res = await t.call('GET', '/organization/members');
    expectStatus(res, 200);
    expect(res.body.total_count).toBe(1);
    expect(res.body.data).toHaveLength(1);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(MEMBER_FIELDS);
    expect(res.body.data[0]).toMatchObject({ email: 'admin@localhost', role: 'org:admin' });
    expect(typeof res.body.data[0].id).toBe('string');
  });

  it('POST /organization/members adds a member (201) with defaults; emails are unique, case-insensitively (409)', async () => {
    const e = email('Mixed.Case');
    const res = await add({ email: e });
    expectStatus(res, 201);
    expect(Object.keys(res.body.data).sort()).toEqual(MEMBER_FIELDS);
    expect(res.body.data).toMatchObject({ email: e.toLowerCase(), first_name: '', last_name: '', role: 'org:member' });

    const full = await add({ email: email(), first_name: 'Ada', last_name: 'Lovelace', role: 'org:admin' });
    expectStatus(full, 201);
    expect(full.body.data).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', role: 'org:admin' });

    expectError(await add({ email: e }), 409);
    expectError(await add({ email: e.toUpperCase() }), 409);
  });

  it('validates the member body', async () => {
    expectError(await add({}), 400, { field: 'email', rule: 'required' });
    expectError(await add({ email: 'not-an-email' }), 400, { field: 'email', rule: 'format' });
    expectError(await add({ email: email(), role: 'owner' }), 400, { field: 'role', rule: 'enum' });
    expectStatus(await add({ email: email(), first_name: 'f'.repeat(100), last_name: 'l'.repeat(100) }), 201);
    expectError(await add({ email: email(), first_name: 'f'.repeat(101) }), 400, { field: 'first_name', rule: 'maxLength' });
    expectError(await add({ email: email(), last_name: 'l'.repeat(101) }), 400, { field: 'last_name', rule: 'maxLength' });
  });

  it('GET lists oldest first with total_count; limit 1 to 100 (default 50), offset 0 or more', async () => {
    // Enough members to exceed the default page.
    const before = (await t.call('GET', '/organization/members?limit=100')).body.total_count;
    const added: string[] = [];
    for (let i = 0; added.length + before < 56; i++) {
      await sleep(2);
      const r = await add({ email: email('page'), first_name: `P${i}` });
      expectStatus(r, 201);
      added.push(r.body.data.id);
    }
    const total = before + added.length;

    const def = await t.call('GET', '/organization/members');
    expectStatus(def, 200);
    expect(def.body.data).toHaveLength(50);
    expect(def.body.total_count).toBe(total);
    expect(def.body.data[0].id).toBe(owner.id);

    const all = await t.call('GET', '/organization/members?limit=100');
    expect(all.body.data).toHaveLength(total);
    expect(all.body.data.slice(-added.length).map((m: { id: string }) => m.id)).toEqual(added);
    expect(all.body.data.slice(0, 50)).toEqual(def.body.data);

    const one = await t.call('GET', '/organization/members?limit=1');
    expect(one.body.data.map((m: { id: string }) => m.id)).toEqual([owner.id]);
    expect(one.body.total_count).toBe(total);
    const last = await t.call(`GET`, `/organization/members?offset=${total - 1}&limit=100`);
    expect(last.body.data.map((m: { id: string }) => m.id)).toEqual([added[added.length - 1]]);
    const past = await t.call('GET', `/organization/members?offset=${total}`);
    expectStatus(past, 200);
    expect(past.body).toEqual({ data: [], total_count: total });
    const zero = await t.call('GET', '/organization/members?offset=0&limit=100');
    expect(zero.body.data).toEqual(all.body.data);

    expectError(await t.call('GET', '/organization/members?limit=0'), 400, { field: 'limit', rule: 'minimum' });
    expectError(await t.call('GET', '/organization/members?limit=101'), 400, { field: 'limit', rule: 'maximum' });
    expectError(await t.call('GET', '/organization/members?offset=-1'), 400, { field: 'offset' });
    expectError(await t.call('GET', '/organization/members?limit=many'), 400, { field: 'limit' });
    expectError(await t.call('GET', '/organization/members?offset=1.5'), 400, { field: 'offset' });
  });

  it('DELETE removes a member; unknown → 404', async () => {
    const m = (await add({ email: email('gone') })).body.data;
    const res = await t.call('DELETE', `/organization/members/${m.id}`);
    expectStatus(res, 200);
    expect(res.body).toEqual({ deleted: true });
    const ids = (await t.call('GET', '/organization/members?limit=100')).body.data.map((x: { id: string }) => x.id);
    expect(ids).not.toContain(m.id);
    expectError(await t.call('DELETE', `/organization/members/${m.id}`), 404);
    expectError(await t.call('DELETE', '/organization/members/user_nobody'), 404);
  });

  it('a member who owns active keys cannot be removed (409) until the keys are disabled', async () => {
    const m = (await add({ email: email('owner') })).body.data;
    const k = await createInferenceKey(t, { name: 'owned', creator_user_id: m.id });
    expect(k.data.creator_user_id).toBe(m.id);
    expectError(await t.call('DELETE', `/organization/members/${m.id}`), 409, { message: /active key/ });
    expectStatus(await t.call('PATCH', `/keys/${k.hash}`, { body: { disabled: true } }), 200);
    expectStatus(await t.call('DELETE', `/organization/members/${m.id}`), 200);
    // The disabled key stays, detached from the removed member.
    const key = await t.call('GET', `/keys/${k.hash}`);
    expectStatus(key, 200);
    expect(key.body.data.creator_user_id).toBeNull();
  });

  it('the last admin cannot be removed (409)', async () => {
    const admins = (await t.call('GET', '/organization/members?limit=100')).body.data.filter((m: { role: string }) => m.role === 'org:admin');
    // The owner holds the bootstrap management key: refused either way.
    expectError(await t.call('DELETE', `/organization/members/${owner.id}`), 409);
    // Remove every other admin; the last one (the owner) must stay.
    for (const a of admins) if (a.id !== owner.id) expectStatus(await t.call('DELETE', `/organization/members/${a.id}`), 200);
    const res = await t.call('DELETE', `/organization/members/${owner.id}`);
    expectError(res, 409, { message: /last admin/ });

    // With a second admin, removing an admin without keys works.
    const second = (await add({ email: email('admin'), role: 'org:admin' })).body.data;
    expectStatus(await t.call('DELETE', `/organization/members/${second.id}`), 200);
    expect((await t.call('GET', '/organization/members?limit=100')).body.data.map((m: { id: string }) => m.id)).toContain(owner.id);
  });

  it('documented auth errors of GET /organization/members: 401 without a valid key; management keys only', async () => {
    expectError(await t.call('GET', '/organization/members', { key: null }), 401);
    expectError(await t.call('GET', '/organization/members', { key: 'sk-gw-v1-unknown' }), 401);
    const k = await createInferenceKey(t, { name: 'members inference' });
    expectError(await t.call('GET', '/organization/members', { key: k.key }), 403, { message: 'Only management keys can perform this operation' });
  });
});
