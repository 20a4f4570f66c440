/** The services behind GET /activity and GET /generation, over a fake store (no database). */
import { describe, expect, it } from 'vitest';
import { ActivityService, activityWindow } from '../../src/services/activity.js';
import { GenerationLookup } from '../../src/services/generation-lookup.js';
import type { GenerationRecorder } from '../../src/services/generations.js';
import type { WorkspaceService } from '../../src/services/workspaces.js';
import type { RouteCatalog } from '../../src/core/routing.js';
import type { ActivityRow, GenerationRow, Store } from '../../src/store/types.js';
import { HttpError } from '../../src/core/errors.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-03-15T12:00:00Z');

describe('activityWindow', () => {
  it('is the last 30 completed UTC days, or one of them', () => {
    expect(activityWindow(undefined, NOW)).toEqual({ from: Date.parse('2026-02-13T00:00:00Z'), to: Date.parse('2026-03-15T00:00:00Z') });
    expect(activityWindow('2026-03-14', NOW)).toEqual({ from: Date.parse('2026-03-14T00:00:00Z'), to: Date.parse('2026-03-15T00:00:00Z') });
  });

  it('refuses today, a day before the window and an impossible date with a 400 naming date', () => {
    for (const d of ['2026-03-15', '2026-02-12', '2026-02-30']) {
      const e = (() => {
        try {
          activityWindow(d, NOW);
        } catch (err) {
          return err as HttpError;
        }
      })();
      expect(e).toBeInstanceOf(HttpError);
      expect(e?.status).toBe(400);
      expect(e?.message).toContain('from 2026-02-13 to 2026-03-14');
    }
  });
});

describe('ActivityService.report', () => {
  const row: ActivityRow = { date: '2026-03-14', model: 'openai/gpt-4o', provider_name: 'openai', endpoint_tag: 'openai', usage: 1, byok_usage_inference: 0, requests: 2, prompt_tokens: 3, completion_tokens: 4, reasoning_tokens: 0 };
  const calls: unknown[] = [];
  const store = {
    getMember: async (id: string) => (id === 'user_a' ? { id } : null),
    listKeyHashes: async () => ['h1', 'h2'],
    activity: async (q: unknown) => (calls.push(q), [row]),
  } as unknown as Store;
  const workspaces = { get: async (id: string) => ({ id: `ws_${id}` }) } as unknown as WorkspaceService;
  const catalog: RouteCatalog = {
    models: new Map([['openai/gpt-4o', { canonical_slug: 'openai/gpt-4o-2024-08-06' }]]) as RouteCatalog['models'],
    endpointsByModel: new Map(),
    providers: new Map([['openai', { name: 'OpenAI' }]]) as RouteCatalog['providers'],
  };
  const svc = new ActivityService({ store, workspaces, catalog: () => catalog, now: () => NOW });

  it("narrows to a member's keys (intersected with api_key_hash) and a workspace, and names models and providers", async () => {
    const items = await svc.report({ user_id: 'user_a', api_key_hash: 'h2', workspace_id: 'team', group_by: 'workspace', date: '2026-03-14' });
    expect(calls.at(-1)).toEqual({ from: '2026-03-14T00:00:00.000Z', to: '2026-03-15T00:00:00.000Z', keyHashes: ['h2'], workspaceId: 'ws_team', byWorkspace: true });
    expect(items).toEqual([{ date: '2026-03-14', model: 'openai/gpt-4o', model_permaslug: 'openai/gpt-4o-2024-08-06', endpoint_id: 'openai', provider_name: 'OpenAI', usage: 1, byok_usage_inference: 0, requests: 2, prompt_tokens: 3, completion_tokens: 4, reasoning_tokens: 0 }]);
  });

  it('an unknown member is a 400 naming user_id', async () => {
    await expect(svc.report({ user_id: 'nobody' })).rejects.toMatchObject({ status: 400, message: 'user_id nobody is not a member of the organization' });
  });
});

describe('GenerationLookup', () => {
  const stored = { id: 'gen-1', key_hash: 'k1' } as GenerationRow;
  const queued = { id: 'gen-2', key_hash: 'k2' } as GenerationRow;
  const store = { getGeneration: async (id: string) => (id === stored.id ? stored : null) } as unknown as Store;
  const recorder = { peek: (id: string) => (id === queued.id ? queued : undefined) } as unknown as GenerationRecorder;
  const lookup = new GenerationLookup(store, recorder);

  it('finds queued and stored records; an inference key sees only its own, a management key any', async () => {
    expect(await lookup.get('gen-2', { kind: 'inference', hash: 'k2' })).toBe(queued);
    expect(await lookup.get('gen-1', { kind: 'management', hash: 'm' })).toBe(stored);
    await expect(lookup.get('gen-1', { kind: 'inference', hash: 'k2' })).rejects.toMatchObject({ status: 404, message: 'Generation gen-1 not found' });
    await expect(lookup.get('gen-9', { kind: 'management', hash: 'm' })).rejects.toMatchObject({ status: 404 });
  });
});
