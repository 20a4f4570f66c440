/** Workspace members: list (the default workspace: everyone), add, remove, and who may own keys where. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, startGateway, type TestGateway } from '../helpers.js';
import { expectError, expectStatus } from './util.js';

describe.each(BACKENDS)('workspace members (%s)', (backend) => {
  let t: TestGateway;
  let owner: { id: string };
  let n = 0;
  const member = async (role = 'org:member') => {
    const res = await t.call('POST', '/organization/members', { body: { email: `wm${++n}-${backend}@example.com`, role } });
    expectStatus(res, 201);
    return res.body.data as { id: string };
  };
  const workspace = async (slug: string) => {
    const res = await t.call('POST', '/workspaces', { body: { name: slug, slug } });
    expectStatus(res, 201);
    return res.body.data as { id: string; slug: string };
  };
  const members = (ws: string, q = '') => t.call('GET', `/workspaces/${ws}/members${q}`);
  const add = (ws: string, user_ids: unknown) => t.call('POST', `/workspaces/${ws}/members/add`, { body: { user_ids } });
  const remove = (ws: string, user_ids: unknown) => t.call('POST', `/workspaces/${ws}/members/remove`, { body: { user_ids } });

  beforeAll(async () => {
    t = await startGateway(backend);
    owner = (await t.call('GET', '/organization/members')).body.data[0];
  });
  afterAll(async () => t?.close());

  it('a new workspace has its creator as its first member (admin); the default one lists every member', async () => {
    const ws = await workspace('team-a');
    const res = await members('team-a');
    expectStatus(res, 200);
    expect(res.body.total_count).toBe(1);
    expect(res.body.data[0]).toMatchObject({ workspace_id: ws.id, user_id: owner.id, role: 'admin' });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(['created_at', 'id', 'role', 'user_id', 'workspace_id']);

    const m = await member();
    const def = await members('default');
    expectStatus(def, 200);
    expect(def.body.data.map((x: { user_id: string }) => x.user_id)).toEqual(expect.arrayContaining([owner.id, m.id]));
    expect(def.body.data.find((x: { user_id: string }) => x.user_id === m.id).role).toBe('member');
    // Implicit memberships have stable ids.
    expect((await members('default')).body.data.map((x: { id: string }) => x.id)).toEqual(def.body.data.map((x: { id: string }) => x.id));
    // Paging.
    const first = await members('default', '?limit=1');
    expect(first.body.data).toHaveLength(1);
    expect(first.body.total_count).toBe(def.body.total_count);
  });

  it('adds organization members with their role, skips those already in, and refuses unknown ones (nothing added)', async () => {
    await workspace('team-b');
    const [a, b] = [await member(), await member('org:admin')];
    expectError(await add('team-b', [a.id, 'user_nobody']), 400, { field: 'user_ids[1]', message: 'user_nobody is not a member' });
    expect((await members('team-b')).body.total_count).toBe(1);

    const res = await add('team-b', [a.id, b.id]);
    expectStatus(res, 200);
    expect(res.body.added_count).toBe(2);
    expect(res.body.data.map((x: { user_id: string; role: string }) => [x.user_id, x.role])).toEqual([
      [a.id, 'member'],
      [b.id, 'admin'],
    ]);
    const again = await add('team-b', [a.id, owner.id]);
    expect(again.body).toEqual({ added_count: 0, data: [] });
    expect((await members('team-b')).body.total_count).toBe(3);
  });

  it('removes members; one who owns an active key in the workspace is refused (400) until the key is disabled', async () => {
    await workspace('team-c');
    const m = await member();
    expectStatus(await add('team-c', [m.id]), 200);
    const key = await t.call('POST', '/keys', { body: { name: 'k', workspace_id: 'team-c', creator_user_id: m.id } });
    expectStatus(key, 201);
    expectError(await remove('team-c', [m.id]), 400, { message: /still own active keys/, field: 'user_ids' });
    expect((await members('team-c')).body.total_count).toBe(2);
    expectStatus(await t.call('PATCH', `/keys/${key.body.data.hash}`, { body: { disabled: true } }), 200);
    const res = await remove('team-c', [m.id, 'user_not_in_it']);
    expectStatus(res, 200);
    expect(res.body).toEqual({ removed_count: 1 });
    expect((await members('team-c')).body.data.map((x: { user_id: string }) => x.user_id)).toEqual([owner.id]);
  });

  it('a member who is not an admin owns keys only in the workspaces they belong to (and the default one)', async () => {
    await workspace('team-d');
    const m = await member();
    const create = (ws: string) => t.call('POST', '/keys', { body: { name: 'mine', workspace_id: ws, creator_user_id: m.id } });
    expectError(await create('team-d'), 400, { field: 'creator_user_id', message: 'is not a member of workspace team-d' });
    expectStatus(await create('default'), 201);
    expectStatus(await add('team-d', [m.id]), 200);
    expectStatus(await create('team-d'), 201);
    // Organization admins own keys anywhere.
    const admin = await member('org:admin');
    expectStatus(await t.call('POST', '/keys', { body: { name: 'admin', workspace_id: 'team-d', creator_user_id: admin.id } }), 201);
  });

  it('memberships go with their workspace and with their member', async () => {
    const ws = await workspace('team-e');
    const m = await member();
    expectStatus(await add('team-e', [m.id]), 200);
    expectStatus(await t.call('DELETE', `/organization/members/${m.id}`), 200);
    expect((await members('team-e')).body.data.map((x: { user_id: string }) => x.user_id)).toEqual([owner.id]);
    expectStatus(await t.call('DELETE', `/workspaces/${ws.id}`), 200);
    expectError(await members(ws.id), 404);
  });

  it('refuses bad input (400 naming the field), the default workspace for add/remove (400), unknown workspaces (404) and inference keys (403)', async () => {
    await workspace('team-f');
    expectError(await add('team-f', []), 400, { message: /user_ids/ });
    expectError(await add('team-f', 'x'), 400, { message: /user_ids/ });
    expectError(await add('team-f', Array.from({ length: 101 }, (_, i) => `u${i}`)), 400, { message: /user_ids/ });
    expectError(await add('team-f', [owner.id, owner.id]), 400, { message: /user_ids/ });
    expectError(await add('default', [owner.id]), 400, { message: /default workspace/ });
    expectError(await remove('default', [owner.id]), 400, { message: /default workspace/ });
    expectError(await add('no-such-ws', [owner.id]), 404);
    expectError(await members('no-such-ws'), 404);
    const key = await t.call('POST', '/keys', { body: { name: 'inference' } });
    expectError(await t.call('GET', '/workspaces/team-f/members', { key: key.body.key }), 403);
  });
});
