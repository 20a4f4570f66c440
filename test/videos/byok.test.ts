/**
 * Video jobs on BYOK credentials (docs/videos.md, docs/byok.md): routed like chat (prioritized credentials by
 * sort_order → the operator's key → fallback credentials; always_use drops the operator's key), the credential that
 * submitted a job remembered on it (its id, never its secret) and used for its polls and downloads, the job failing
 * cleanly (its hold given back) when that credential is deleted or disabled while it runs, and its cost reported as
 * BYOK: `usage.is_byok`, `byok_usage`, and in limits only with include_byok_in_limit / include_byok_in_budgets.
 *
 * The simulator's video jobs belong to the key that created them: polled or downloaded with another key they are not
 * found (404), so a job followed on the wrong credential fails.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { simVideoBytes } from '../../src/sim/video.js';
import { BACKENDS, createInferenceKey } from '../helpers.js';
import { startVideoEnv, until, upstreamCreates, videoCatalog, waitForJob, type VideoEnv } from './util.js';

const ENC = 'video-byok-test-encryption-key-0123456789abcdef';
const SECRET = 'sk-video-own-SECRET-5e2f9a7c1b3d';
const GOOGLE_SECRET = 'AIzaVideoOwnSECRET-4b8d2f6a0c9e';
const OPERATOR = 'operator-video-key';

/** The video test catalog plus BYOK providers: sim-vown and sim-vveo have no operator key, sim-vpool has one. */
function byokVideoCatalog(simUrl: string) {
  const base = videoCatalog(simUrl);
  const dp = { training: false, retains_prompts: true, zdr: false };
  const openaiCaps = { resolutions: ['720p'], aspect_ratios: ['16:9', '9:16'], sizes: ['1280x720', '720x1280'], durations: [4, 8], frame_images: [], generate_audio: true, seed: false, allowed_passthrough_parameters: [], default_duration: 8 };
  const veoCaps = { resolutions: ['720p'], aspect_ratios: ['16:9'], sizes: null, durations: [4, 8], frame_images: [], generate_audio: true, seed: true, allowed_passthrough_parameters: [], default_duration: 8 };
  return {
    providers: [
      ...base.providers,
      { slug: 'sim-vown', name: 'Sim Video Own', protocol: 'openai', base_url: `${simUrl}/sim-vown/v1`, data_policy: dp },
      { slug: 'sim-vpool', name: 'Sim Video Pool', protocol: 'openai', base_url: `${simUrl}/sim-vpool/v1`, api_key: OPERATOR, data_policy: dp },
      { slug: 'sim-vveo', name: 'Sim Video Veo Own', protocol: 'google', base_url: `${simUrl}/sim-vveo/v1beta`, data_policy: dp },
    ],
    models: [
      ...base.models,
      { id: 'test/vown', name: 'Video on BYOK only', input_modalities: ['text'], output_modalities: ['video'] },
      { id: 'test/vpool', name: 'Video on the shared pool or BYOK', input_modalities: ['text'], output_modalities: ['video'] },
      { id: 'test/vveo', name: 'Veo on BYOK only', input_modalities: ['text'], output_modalities: ['video'] },
    ],
    endpoints: [
      ...base.endpoints,
      { model: 'test/vown', provider: 'sim-vown', upstream_model: 'sora-own', pricing: { video_second: '0.10' }, video: openaiCaps },
      { model: 'test/vpool', provider: 'sim-vpool', upstream_model: 'sora-pool', pricing: { video_second: '0.10' }, video: openaiCaps },
      { model: 'test/vveo', provider: 'sim-vveo', upstream_model: 'veo-own', pricing: { video_second: '0.05' }, video: veoCaps },
    ],
  };
}

describe.each(BACKENDS)('video jobs on BYOK credentials (%s)', (backend) => {
  let env: VideoEnv;
  beforeAll(async () => {
    env = await startVideoEnv(backend, { env: { GATEWAY_ENCRYPTION_KEY: ENC }, catalog: byokVideoCatalog });
  });
  afterAll(async () => env?.close());
  beforeEach(() => env.sim.resetKnobs());

  const credential = async (body: Record<string, unknown>) => {
    const r = await env.t.call('POST', '/byok', { body });
    expect(r.status).toBe(201);
    return r.body.data.id as string;
  };
  const create = (key: string, body: Record<string, unknown>) => env.t.call('POST', '/videos', { key, body: { prompt: 'a heron in the reeds', duration: 4, ...body } });
  const stored = async (id: string) => (await env.t.gw.svc.store.getVideoJob(id))!;
  /** The keys the provider's job creations carried since `from` (a count of creations). */
  const createKeys = (provider: string, from: number) =>
    upstreamCreates(env.sim)
      .slice(from)
      .filter((r) => r.provider === provider)
      .map((r) => String(r.headers.authorization ?? r.headers['x-goog-api-key'] ?? '').replace(/^Bearer /, ''));
  const download = (job: { unsigned_urls: string[] }, key: string) => fetch(`${env.t.url}${job.unsigned_urls[0]}`, { headers: { authorization: `Bearer ${key}` } });
  /** Creates a job once the key's limits have room (a job that just ended gives its hold back right after its end shows). */
  const admitted = async (key: string, body: Record<string, unknown>) => {
    let res: Awaited<ReturnType<typeof create>> | undefined;
    await until(async () => (res = await create(key, body)).status !== 402, 5_000, 'room for the job');
    expect(res!.status).toBe(202);
    return res!;
  };
  const sim = (path: string, key?: string) => fetch(`${env.sim.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  it("submits, polls and downloads a job on the workspace's credential: is_byok, byok_usage, the id (never the secret) on the job", async () => {
    const id = await credential({ provider: 'sim-vown', key: SECRET });
    const k = await createInferenceKey(env.t, { name: `byok video ${backend}` });
    try {
      const from = upstreamCreates(env.sim).length;
      const res = await create(k.key, { model: 'test/vown' });
      expect(res.status).toBe(202);
      const { job } = await waitForJob(env.t, k.key, res.body.id);
      // Completed: every poll went with the credential (the simulator answers another key's poll with 404).
      expect(job).toMatchObject({ status: 'completed', usage: { is_byok: true } });
      expect(job.usage.cost).toBeCloseTo(0.4, 10);
      expect(createKeys('sim-vown', from)).toEqual([SECRET]);
      const row = await stored(res.body.id);
      expect(row).toMatchObject({ is_byok: true, byok_credential_id: id, provider: 'sim-vown' });
      expect(JSON.stringify(row)).not.toContain(SECRET);
      // The download goes on the credential too.
      const content = await download(job, k.key);
      expect(content.status).toBe(200);
      expect(Buffer.from(await content.arrayBuffer()).equals(simVideoBytes(row.upstream_id!))).toBe(true);
      // The simulator verifies the credential: the upstream job is not found with another key, or none.
      expect((await sim(`/sim-vown/v1/videos/${row.upstream_id}`, SECRET)).status).toBe(200);
      expect((await sim(`/sim-vown/v1/videos/${row.upstream_id}`, OPERATOR)).status).toBe(404);
      expect((await sim(`/sim-vown/v1/videos/${row.upstream_id}/content`)).status).toBe(404);
      // Recorded as BYOK: the generation, and the key's byok_usage instead of usage.
      await env.t.gw.svc.recorder.flush();
      const g = await env.t.call('GET', `/generation?id=${job.generation_id}`, { key: k.key });
      expect(g.body.data).toMatchObject({ is_byok: true, provider_name: 'sim-vown', api_type: 'video' });
      expect(g.body.data.total_cost).toBeCloseTo(0.4, 10);
      const usage = (await env.t.call('GET', `/keys/${k.hash}`)).body.data;
      expect(usage).toMatchObject({ usage: 0 });
      expect(usage.byok_usage).toBeCloseTo(0.4, 10);
      // A key of another workspace cannot use the credential, and the provider has no operator key.
      const ws = (await env.t.call('POST', '/workspaces', { body: { name: `Other ${backend}`, slug: `other-${backend}` } })).body.data.id as string;
      const other = await createInferenceKey(env.t, { name: `other ${backend}`, workspace_id: ws });
      expect((await create(other.key, { model: 'test/vown' })).status).toBe(404);
    } finally {
      await env.t.call('DELETE', `/byok/${id}`);
    }
  });

  it('Veo on a credential: x-goog-api-key on the creation, the operation polls and the sample download', async () => {
    const id = await credential({ provider: 'sim-vveo', key: GOOGLE_SECRET });
    try {
      const from = upstreamCreates(env.sim).length;
      const res = await create(env.key, { model: 'test/vveo', duration: 8 });
      expect(res.status).toBe(202);
      const { job } = await waitForJob(env.t, env.key, res.body.id);
      expect(job).toMatchObject({ status: 'completed', usage: { is_byok: true } });
      expect(job.usage.cost).toBeCloseTo(0.4, 10);
      expect(createKeys('sim-vveo', from)).toEqual([GOOGLE_SECRET]);
      const content = await download(job, env.key);
      expect(content.status).toBe(200);
      expect(Buffer.from(await content.arrayBuffer()).subarray(4, 8).toString('latin1')).toBe('ftyp');
      const name = (await stored(res.body.id)).upstream_id!;
      const op = (key: string) => fetch(`${env.sim.url}/sim-vveo/v1beta/${name}`, { headers: { 'x-goog-api-key': key } });
      expect((await op(GOOGLE_SECRET)).status).toBe(200);
      expect((await op('AIzaSomeoneElse')).status).toBe(404);
    } finally {
      await env.t.call('DELETE', `/byok/${id}`);
    }
  });

  it('routes prioritized credentials, then the operator key, then fallback ones; always_use drops the operator key', async () => {
    const fb = await credential({ provider: 'sim-vpool', key: 'k-video-fallback', is_fallback: true, sort_order: 0 });
    const p1 = await credential({ provider: 'sim-vpool', key: 'k-video-prio-1', sort_order: 5 });
    const p0 = await credential({ provider: 'sim-vpool', key: 'k-video-prio-0', sort_order: 1 });
    const run = async () => {
      const from = upstreamCreates(env.sim).length;
      const res = await create(env.key, { model: 'test/vpool' });
      expect(res.status).toBe(202);
      const { job } = await waitForJob(env.t, env.key, res.body.id);
      return { job, sent: createKeys('sim-vpool', from), row: await stored(res.body.id) };
    };
    try {
      let r = await run();
      expect(r.job).toMatchObject({ status: 'completed', usage: { is_byok: true } });
      expect(r.sent).toEqual(['k-video-prio-0']);
      expect(r.row.byok_credential_id).toBe(p0);

      // The prioritized ones refused: the operator's key takes it (and follows it: not BYOK).
      env.sim.setKnobs('sim-vpool', { rejectKeys: ['k-video-prio-0', 'k-video-prio-1'] });
      r = await run();
      expect(r.job).toMatchObject({ status: 'completed', usage: { is_byok: false } });
      expect(r.sent).toEqual(['k-video-prio-0', 'k-video-prio-1', OPERATOR]);
      expect(r.row.byok_credential_id).toBeNull();

      // The operator's key refused too: the fallback credential.
      env.sim.setKnobs('sim-vpool', { rejectKeys: ['k-video-prio-0', 'k-video-prio-1', OPERATOR] });
      r = await run();
      expect(r.job).toMatchObject({ status: 'completed', usage: { is_byok: true } });
      expect(r.sent).toEqual(['k-video-prio-0', 'k-video-prio-1', OPERATOR, 'k-video-fallback']);
      expect(r.row.byok_credential_id).toBe(fb);

      // always_use: no attempt on the operator's key; every credential refused, the job fails naming the refusal.
      await env.t.call('PATCH', `/byok/${p1}`, { body: { always_use: true } });
      env.sim.setKnobs('sim-vpool', { rejectKeys: ['k-video-prio-0', 'k-video-prio-1', 'k-video-fallback'] });
      r = await run();
      expect(r.sent).toEqual(['k-video-prio-0', 'k-video-prio-1', 'k-video-fallback']);
      expect(r.job.status).toBe('failed');
      expect(r.job.error).toBe('Provider returned error: Provider rejected the gateway credentials');
    } finally {
      for (const id of [fb, p1, p0]) await env.t.call('DELETE', `/byok/${id}`);
    }
  });

  it("reads each candidate's credential only when its attempt starts: those after the one that takes the job never are", async () => {
    const first = await credential({ provider: 'sim-vpool', key: 'k-video-first', sort_order: 1 });
    const second = await credential({ provider: 'sim-vpool', key: 'k-video-second', sort_order: 2 });
    const last = await credential({ provider: 'sim-vpool', key: 'k-video-last', is_fallback: true });
    const byok = env.t.gw.svc.byok;
    const original = byok.credential;
    const read: string[] = [];
    byok.credential = (id: string) => {
      read.push(id);
      return original.call(byok, id);
    };
    const run = async () => {
      read.length = 0;
      const res = await create(env.key, { model: 'test/vpool' });
      expect(res.status).toBe(202);
      return { job: (await waitForJob(env.t, env.key, res.body.id)).job, row: await stored(res.body.id) };
    };
    try {
      let r = await run();
      expect(r.job).toMatchObject({ status: 'completed', usage: { is_byok: true } });
      expect(r.row.byok_credential_id).toBe(first);
      // The job was submitted and polled on the first credential: the others were never read.
      expect(new Set(read)).toEqual(new Set([first]));

      // The first refused: the second is read when its turn comes and takes the job; the fallback is still never read.
      env.sim.setKnobs('sim-vpool', { rejectKeys: ['k-video-first'] });
      r = await run();
      expect(r.row.byok_credential_id).toBe(second);
      expect(new Set(read)).toEqual(new Set([first, second]));
    } finally {
      byok.credential = original;
      for (const id of [first, second, last]) await env.t.call('DELETE', `/byok/${id}`);
    }
  });

  it('a credential deleted or disabled while its job runs fails the job with a clear error and gives its hold back', async () => {
    env.sim.setKnobs('sim-vown', { videoJobMs: 60_000 });
    const a = await credential({ provider: 'sim-vown', key: SECRET });
    // Limit $1: one 8 s job ($0.80) is held at a time; BYOK spend does not count, so each ending frees the room.
    const k = await createInferenceKey(env.t, { name: `gone ${backend}`, limit: 1 });
    try {
      const first = await create(k.key, { model: 'test/vown', duration: 8 });
      expect(first.status).toBe(202);
      await until(async () => (await stored(first.body.id)).upstream_id !== null, 10_000, 'the job to be submitted');
      expect((await create(k.key, { model: 'test/vown', duration: 8 })).status).toBe(402); // held
      expect((await env.t.call('DELETE', `/byok/${a}`)).status).toBe(200);
      const { job } = await waitForJob(env.t, k.key, first.body.id);
      expect(job.status).toBe('failed');
      expect(job.error).toBe(`The BYOK credential ${a} (sim-vown) was deleted while the job ran: it can no longer be polled`);
      expect(job.usage).toBeUndefined();

      // The hold is back: another $0.80 job fits. Disabled while it runs: the same, naming it.
      const b = await credential({ provider: 'sim-vown', key: SECRET });
      const second = await admitted(k.key, { model: 'test/vown', duration: 8 });
      await until(async () => (await stored(second.body.id)).upstream_id !== null, 10_000, 'the job to be submitted');
      await env.t.call('PATCH', `/byok/${b}`, { body: { disabled: true } });
      const ended = (await waitForJob(env.t, k.key, second.body.id)).job;
      expect(ended.status).toBe('failed');
      expect(ended.error).toContain(`The BYOK credential ${b} (sim-vown) was disabled`);
      await env.t.gw.svc.recorder.flush();
      const g = await env.t.call('GET', `/generation?id=${ended.generation_id}`, { key: k.key });
      expect(g.body.data).toMatchObject({ is_byok: true, total_cost: 0, finish_reason: 'failed', provider_name: 'sim-vown' });
      await env.t.call('DELETE', `/byok/${b}`);

      // A credential deleted after the job completed: its videos can no longer be fetched (502 naming it).
      env.sim.setKnobs('sim-vown', { videoJobMs: 0 });
      const c = await credential({ provider: 'sim-vown', key: SECRET });
      const third = await admitted(k.key, { model: 'test/vown' });
      expect((await waitForJob(env.t, k.key, third.body.id)).job.status).toBe('completed');
      await env.t.call('DELETE', `/byok/${c}`);
      const gone = await env.t.call('GET', `/videos/${third.body.id}/content`, { key: k.key });
      expect(gone.status).toBe(502);
      expect(gone.body.error.message).toContain(`The BYOK credential ${c} (sim-vown) was deleted`);
    } finally {
      env.sim.resetKnobs();
    }
  });

  it("BYOK video spend counts in the key's limit only with include_byok_in_limit, in budgets only with include_byok_in_budgets", async () => {
    const ws = (await env.t.call('POST', '/workspaces', { body: { name: `Budget ${backend}`, slug: `budget-${backend}` } })).body.data.id as string;
    const id = await credential({ provider: 'sim-vown', key: SECRET, workspace_id: ws });
    const excluded = await createInferenceKey(env.t, { name: `not counted ${backend}`, workspace_id: ws, limit: 0.5 });
    const included = await createInferenceKey(env.t, { name: `counted ${backend}`, workspace_id: ws, limit: 0.5, include_byok_in_limit: true });
    const done = async (key: string) => {
      const res = await admitted(key, { model: 'test/vown' }); // 4 s at $0.10: $0.40
      return (await waitForJob(env.t, key, res.body.id)).job;
    };
    // Not counted: $0.40 twice under a $0.50 limit.
    for (let i = 0; i < 2; i++) expect((await done(excluded.key)).usage.is_byok).toBe(true);
    // Counted: the first $0.40 leaves $0.10, too little for the next job's hold.
    expect((await done(included.key)).usage.is_byok).toBe(true);
    const refused = await create(included.key, { model: 'test/vown' });
    expect(refused.status).toBe(402);
    await env.t.gw.svc.recorder.flush();
    const ex = (await env.t.call('GET', `/keys/${excluded.hash}`)).body.data;
    expect(ex).toMatchObject({ usage: 0, limit_remaining: 0.5 });
    expect(ex.byok_usage).toBeCloseTo(0.8, 10);
    const inc = (await env.t.call('GET', `/keys/${included.hash}`)).body.data;
    expect(inc.limit_remaining).toBeCloseTo(0.1, 10);

    // A workspace budget of $0.50 a day: not counting BYOK, jobs keep fitting; counting it, the spend above fills it.
    const budgetKey = await createInferenceKey(env.t, { name: `budget ${backend}`, workspace_id: ws });
    expect((await env.t.call('PUT', `/workspaces/${ws}/budgets/daily`, { body: { limit_usd: 0.5, include_byok_in_budgets: false } })).status).toBe(200);
    expect((await done(budgetKey.key)).status).toBe('completed');
    expect((await env.t.call('PUT', `/workspaces/${ws}/budgets/daily`, { body: { limit_usd: 0.5, include_byok_in_budgets: true } })).status).toBe(200);
    expect((await create(budgetKey.key, { model: 'test/vown' })).status).toBe(402);
    await env.t.call('DELETE', `/byok/${id}`);
  });
});
