/** POST /videos, GET /videos/{id}, content, cancel, models: lifecycle, errors and access, on both databases. */
import { describe, expect, it } from 'vitest';
import { simVideoBytes } from '../../src/sim/video.js';
import { ADMIN_KEY, BACKENDS, createInferenceKey } from '../helpers.js';
import { videoEnvFor, upstreamCreates, waitForJob } from './util.js';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe.each(BACKENDS)('videos API (%s)', (backend) => {
  const env = videoEnvFor(backend);

  const create = (body: Record<string, unknown>, key = env.key) => env.t.call('POST', '/videos', { key, body });

  it('answers 202 with {id, polling_url, status: "pending"} for a job already stored', async () => {
    env.sim.setKnobs('sim-ov', { videoJobMs: 200 });
    const res = await create({ model: 'test/sora', prompt: 'a cat on a skateboard', duration: 8, resolution: '720p', aspect_ratio: '16:9' });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(['id', 'polling_url', 'status']);
    expect(res.body.status).toBe('pending');
    expect(res.body.id).toMatch(/^job-[0-9a-f]{24}$/);
    expect(res.body.polling_url).toBe(`/api/v1/videos/${res.body.id}`);
    expect(res.headers.get('location')).toBe(res.body.polling_url);
    const stored = await env.t.gw.svc.store.getVideoJob(res.body.id);
    expect(stored).not.toBeNull();
    expect(stored!.model).toBe('test/sora');
    expect(stored!.key_hash).toBe(env.keyHash);
    await waitForJob(env.t, env.key, res.body.id);
  });

  it('drives an OpenAI Videos API job to completed: generation_id once processed, usage and URLs only at the end', async () => {
    env.sim.setKnobs('sim-ov', { videoJobMs: 400 });
    const res = await create({ model: 'test/sora', prompt: 'waves at dusk', duration: 8, resolution: '720p', aspect_ratio: '16:9' });
    const { job, seen } = await waitForJob(env.t, env.key, res.body.id, (j) => {
      if (j.status !== 'completed') {
        expect(j.usage).toBeUndefined();
        expect(j.unsigned_urls).toBeUndefined();
      }
      if (j.status === 'in_progress') expect(j.generation_id).toMatch(/^gen-/);
      if (j.status === 'pending') expect(j.generation_id).toBeUndefined();
      return j.status === 'completed';
    });
    expect(seen).toContain('in_progress');
    expect(seen[seen.length - 1]).toBe('completed');
    expect(job.generation_id).toMatch(/^gen-/);
    expect(job.usage).toEqual({ cost: 0.8, is_byok: false }); // 8 s × $0.10
    expect(job.unsigned_urls).toEqual([`/api/v1/videos/${job.id}/content?index=0`]);
    expect(job.error).toBeUndefined();
    // What went upstream: OpenAI's shape (seconds as a string, a size derived from resolution and aspect ratio).
    const sent = upstreamCreates(env.sim).find((r) => (r.body as any).prompt === 'waves at dusk')!;
    expect(sent.provider).toBe('sim-ov');
    expect(sent.body).toEqual({ model: 'sora-sim', prompt: 'waves at dusk', seconds: '8', size: '1280x720' });
  });

  it('drives a Google Veo job to completed, with several videos, passthrough options and per-resolution pricing', async () => {
    env.sim.setKnobs('sim-veo', { videoJobMs: 150, videoBytes: 4096 });
    const res = await create({
      model: 'test/veo',
      prompt: 'a lighthouse in a storm',
      resolution: '4K',
      aspect_ratio: '9:16',
      seed: 7,
      frame_images: [{ type: 'image_url', image_url: { url: PNG }, frame_type: 'first_frame' }],
      provider: { options: { 'sim-veo': { sampleCount: 2, negativePrompt: 'blur', notAllowed: true }, 'sim-ov': { quality: 'x' } } },
    });
    expect(res.status).toBe(202);
    const { job } = await waitForJob(env.t, env.key, res.body.id);
    expect(job.status).toBe('completed');
    expect(job.usage).toEqual({ cost: 2.8, is_byok: false }); // default 8 s × $0.35 (4K)
    expect(job.unsigned_urls).toEqual([0, 1].map((i) => `/api/v1/videos/${job.id}/content?index=${i}`));
    const sent = upstreamCreates(env.sim).find((r) => r.path.endsWith(':predictLongRunning') && (r.body as any).instances[0].prompt === 'a lighthouse in a storm')!;
    expect(sent.path).toBe('/v1beta/models/veo-sim:predictLongRunning');
    expect(sent.body).toEqual({
      instances: [{ prompt: 'a lighthouse in a storm', image: { bytesBase64Encoded: PNG.split(',')[1], mimeType: 'image/png' } }],
      parameters: { durationSeconds: 8, aspectRatio: '9:16', resolution: '4k', seed: 7, sampleCount: 2, negativePrompt: 'blur' },
    });

    // Each video's bytes, proxied: exactly the simulator's, as video/mp4.
    const upstreamId = (await env.t.gw.svc.store.getVideoJob(job.id))!.upstream_id!;
    const opId = upstreamId.split('/').pop()!;
    for (const index of [0, 1]) {
      const r = await fetch(`${env.t.url}${job.unsigned_urls[index]}`, { headers: { authorization: `Bearer ${env.key}` } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('video/mp4');
      const bytes = Buffer.from(await r.arrayBuffer());
      expect(bytes.equals(simVideoBytes(opId, index, 4096))).toBe(true);
      expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
      const direct = Buffer.from(await (await fetch(`${env.sim.url}/sim-veo/v1beta/files/${opId}-${index}:download?alt=media`)).arrayBuffer());
      expect(bytes.equals(direct)).toBe(true);
    }
    expect((await env.call('GET', `/videos/${job.id}/content`)).status).toBe(200); // index defaults to 0
    const out = await env.call('GET', `/videos/${job.id}/content?index=2`);
    expect(out.status).toBe(404);
    expect(out.body.error.message).toMatch(/no video at index 2/);
    expect((await env.call('GET', `/videos/${job.id}/content?index=-1`)).status).toBe(400);
  });

  it('streams the content of an OpenAI job: the bytes the simulator serves, never its URL', async () => {
    const res = await create({ model: 'test/sora', prompt: 'content check', size: '720x1280' });
    const { job } = await waitForJob(env.t, env.key, res.body.id);
    const r = await fetch(`${env.t.url}${job.unsigned_urls[0]}`, { headers: { authorization: `Bearer ${env.key}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await r.arrayBuffer());
    expect(Number(r.headers.get('content-length'))).toBe(bytes.length);
    const videoId = (await env.t.gw.svc.store.getVideoJob(job.id))!.upstream_id!;
    const direct = Buffer.from(await (await fetch(`${env.sim.url}/sim-ov/v1/videos/${videoId}/content`)).arrayBuffer());
    expect(bytes.equals(direct)).toBe(true);
    expect(bytes.equals(simVideoBytes(videoId))).toBe(true);
    expect(JSON.stringify(job)).not.toContain(env.sim.url);
  });

  it('refuses the content of a job that has not completed (400)', async () => {
    env.sim.setKnobs('sim-ov', { videoJobMs: 2000 });
    const res = await create({ model: 'test/sora', prompt: 'slow one' });
    const r = await env.call('GET', `/videos/${res.body.id}/content`);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/available once it is completed/);
    await env.call('POST', `/videos/${res.body.id}/cancel`);
  });

  it('fails a job the provider fails: status failed with its error, a generation id, no usage', async () => {
    env.sim.setKnobs('sim-veo', { videoJobMs: 100, videoFail: 'Content policy violation: the prompt was blocked' });
    const res = await create({ model: 'test/veo', prompt: 'something blocked' });
    const { job, seen } = await waitForJob(env.t, env.key, res.body.id);
    expect(seen).toContain('in_progress');
    expect(job.status).toBe('failed');
    expect(job.error).toBe('Content policy violation: the prompt was blocked');
    expect(job.generation_id).toMatch(/^gen-/);
    expect(job.usage).toBeUndefined();
    expect(job.unsigned_urls).toBeUndefined();
    const gen = await env.call('GET', `/generation?id=${job.generation_id}`);
    expect(gen.status).toBe(200);
    expect(gen.body.data).toMatchObject({ api_type: 'video', finish_reason: 'failed', total_cost: 0, provider_name: 'sim-veo' });
  });

  it('fails a job whose submission the provider refuses', async () => {
    env.sim.setKnobs('sim-ov', { errorStatus: 400 });
    const res = await create({ model: 'test/sora', prompt: 'refused at once' });
    const { job } = await waitForJob(env.t, env.key, res.body.id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^Provider returned error: /);
    expect(job.generation_id).toMatch(/^gen-/);
  });

  it('falls back to the next endpoint when the first one cannot take the job', async () => {
    env.sim.setKnobs('sim-ov', { errorStatus: 503 });
    // sort by price: the cheaper sim-ov first (otherwise the first try is drawn among endpoints of similar price).
    const res = await create({ model: 'test/sora-fallback', prompt: 'fallback please', provider: { sort: 'price' } });
    const { job } = await waitForJob(env.t, env.key, res.body.id);
    expect(job.status).toBe('completed');
    expect(job.usage.cost).toBeCloseTo(0.8, 10); // default 4 s × $0.20 on the fallback endpoint
    const row = (await env.t.gw.svc.store.getVideoJob(job.id))!;
    expect(row.provider).toBe('sim-ov2');
    const gen = await env.call('GET', `/generation?id=${job.generation_id}`);
    expect(gen.body.data.provider_responses.map((a: any) => [a.provider, a.status])).toEqual([
      ['sim-ov', 502],
      ['sim-ov2', 200],
    ]);
  });

  it('records the generation of a completed job (api_type video, cost, timing)', async () => {
    const res = await create({ model: 'test/veo', prompt: 'a record', duration: 4 });
    const { job } = await waitForJob(env.t, env.key, res.body.id);
    expect(job.usage.cost).toBeCloseTo(0.6, 10); // 4 s × $0.15
    const gen = await env.call('GET', `/generation?id=${job.generation_id}`);
    expect(gen.status).toBe(200);
    expect(gen.body.data).toMatchObject({
      id: job.generation_id,
      api_type: 'video',
      requested_model: 'test/veo',
      model: 'test/veo',
      provider_name: 'sim-veo',
      finish_reason: 'completed',
      status: 200,
      is_byok: false,
      api_key_hash: env.keyHash,
    });
    expect(gen.body.data.total_cost).toBeCloseTo(0.6, 10);
    expect(gen.body.data.upstream_id).toMatch(/^models\/veo-sim\/operations\//);
  });

  it('cancels a running job (extension) and refuses to cancel an ended one', async () => {
    env.sim.setKnobs('sim-ov', { videoJobMs: 60_000 });
    const res = await create({ model: 'test/sora', prompt: 'never mind' });
    await waitForJob(env.t, env.key, res.body.id, (j) => j.status === 'in_progress');
    const c = await env.call('POST', `/videos/${res.body.id}/cancel`);
    expect(c.status).toBe(200);
    expect(c.body.status).toBe('cancelled');
    expect(c.body.generation_id).toMatch(/^gen-/);
    expect(c.body.usage).toBeUndefined();
    await new Promise((r) => setTimeout(r, 100)); // the worker keeps running: nothing moves a cancelled job
    expect((await env.call('GET', `/videos/${res.body.id}`)).body.status).toBe('cancelled');
    const again = await env.call('POST', `/videos/${res.body.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/already cancelled/);
    const gen = await env.call('GET', `/generation?id=${c.body.generation_id}`);
    expect(gen.body.data).toMatchObject({ finish_reason: 'cancelled', cancelled: true, total_cost: 0 });
  });

  it("answers 404 for another workspace's job and for unknown ids; a job is visible to its workspace's keys", async () => {
    const res = await create({ model: 'test/sora', prompt: 'private' });
    const ws = await env.t.call('POST', '/workspaces', { body: { name: 'Other', slug: `other-${backend}` } });
    expect(ws.status).toBe(201);
    const outsider = await createInferenceKey(env.t, { name: 'outsider', workspace_id: ws.body.data.id });
    const colleague = await createInferenceKey(env.t, { name: 'colleague' });
    await waitForJob(env.t, env.key, res.body.id);
    for (const [method, path] of [
      ['GET', `/videos/${res.body.id}`],
      ['GET', `/videos/${res.body.id}/content`],
      ['POST', `/videos/${res.body.id}/cancel`],
    ] as const) {
      const r = await env.t.call(method, path, { key: outsider.key });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error).toEqual({ code: 404, message: `Video job ${res.body.id} not found` });
    }
    expect((await env.t.call('GET', `/videos/${res.body.id}`, { key: colleague.key })).status).toBe(200);
    const unknown = await env.call('GET', '/videos/job-000000000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe(404);
    expect((await env.call('GET', '/videos/job-nope/content')).status).toBe(404);
  });

  it('requires an inference key (401 without a valid one, 403 for a management key)', async () => {
    const res = await create({ model: 'test/sora', prompt: 'auth' });
    for (const [method, path, body] of [
      ['POST', '/videos', { model: 'test/sora', prompt: 'x' }],
      ['GET', `/videos/${res.body.id}`, undefined],
      ['GET', `/videos/${res.body.id}/content`, undefined],
      ['POST', `/videos/${res.body.id}/cancel`, undefined],
    ] as const) {
      const none = await env.t.call(method, path, { key: null, body });
      expect(none.status, `${method} ${path}`).toBe(401);
      expect(none.body.error.code).toBe(401);
      expect((await env.t.call(method, path, { key: 'sk-gw-v1-' + 'f'.repeat(64), body })).status).toBe(401);
      const mgmt = await env.t.call(method, path, { key: ADMIN_KEY, body });
      expect(mgmt.status, `${method} ${path}`).toBe(403);
    }
    await waitForJob(env.t, env.key, res.body.id);
  });

  it.each([
    ['no model', { prompt: 'x' }, 400, /model/],
    ['an unknown resolution', { model: 'test/veo', prompt: 'x', resolution: '999p' }, 400, /resolution/],
    ['a zero duration', { model: 'test/veo', prompt: 'x', duration: 0 }, 400, /duration/],
    // Bodies are validated as sent: no type is coerced.
    ['a duration sent as a string', { model: 'test/veo', prompt: 'x', duration: '8' }, 400, /duration/],
    ['a model sent as a number', { model: 42, prompt: 'x' }, 400, /model/],
    ['a duration the model does not support', { model: 'test/veo', prompt: 'x', duration: 7 }, 400, /duration 7 is not supported by test\/veo \(supported: 4, 6, 8\)/],
    ['an aspect ratio the model does not support', { model: 'test/veo', prompt: 'x', aspect_ratio: '1:1' }, 400, /aspect_ratio 1:1 is not supported/],
    ['a size the model does not support', { model: 'test/sora', prompt: 'x', size: '1024x1024' }, 400, /size 1024x1024 is not supported/],
    ['a malformed size', { model: 'test/sora', prompt: 'x', size: 'big' }, 400, /size/],
    ['a seed the model does not take', { model: 'test/sora', prompt: 'x', seed: 1 }, 400, /seed/],
    ['a last frame the model does not take', { model: 'test/sora', prompt: 'x', frame_images: [{ type: 'image_url', image_url: { url: PNG }, frame_type: 'first_frame' }, { type: 'image_url', image_url: { url: PNG }, frame_type: 'last_frame' }] }, 400, /frame_images last_frame/],
    ['no prompt and no first frame', { model: 'test/veo' }, 400, /prompt is required/],
    ['a last frame without a first frame', { model: 'test/veo', prompt: 'x', frame_images: [{ type: 'image_url', image_url: { url: PNG }, frame_type: 'last_frame' }] }, 400, /needs a first_frame/],
    ['two first frames', { model: 'test/veo', prompt: 'x', frame_images: [0, 1].map(() => ({ type: 'image_url', image_url: { url: PNG }, frame_type: 'first_frame' })) }, 400, /two first_frame/],
    ['a frame image over plain http', { model: 'test/veo', prompt: 'x', frame_images: [{ type: 'image_url', image_url: { url: 'http://example.com/a.png' }, frame_type: 'first_frame' }] }, 400, /https URL or a base64 data URL/],
    ['an upscaler-only parameter', { model: 'test/veo', prompt: 'x', creativity: 2 }, 400, /creativity/],
    ['a callback over plain http', { model: 'test/veo', prompt: 'x', callback_url: 'http://example.com/hook' }, 400, /callback_url must use https/],
    ['a callback to a private address', { model: 'test/veo', prompt: 'x', callback_url: 'https://10.1.2.3/hook' }, 400, /private address/],
    ['a callback that is not a URL', { model: 'test/veo', prompt: 'x', callback_url: 'not a url' }, 400, /callback_url/],
    ['a chat model', { model: 'test/chat', prompt: 'x' }, 400, /is not a video generation model/],
    ['an unknown model', { model: 'nobody/nothing', prompt: 'x' }, 404, /not a valid model ID/],
  ])('rejects %s', async (_what, body, status, message) => {
    const res = await create(body);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(status);
    expect(res.body.error.message).toMatch(message);
  });

  it('rejects a malformed JSON body (400) and stores nothing for rejected requests', async () => {
    const before = upstreamCreates(env.sim).length;
    const res = await env.t.call('POST', '/videos', { key: env.key, raw: '{"model": "test/veo", ' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(400);
    expect(upstreamCreates(env.sim).length).toBe(before);
  });

  it("applies the key's spending limit (402) once its video spend reached it", async () => {
    const limited = await createInferenceKey(env.t, { name: 'limited', limit: 1.2 });
    const first = await create({ model: 'test/veo', prompt: 'spend it' }, limited.key);
    expect(first.status).toBe(202);
    const { job } = await waitForJob(env.t, limited.key, first.body.id);
    expect(job.usage.cost).toBeCloseTo(1.2, 10);
    const second = await create({ model: 'test/veo', prompt: 'one more', duration: 4 }, limited.key);
    expect(second.status).toBe(402);
    expect(second.body.error.metadata.error_type).toBe('payment_required');
    expect(second.body.error.message).toMatch(/^Key limit reached/);
  });

  it('applies guardrails (403) and the organization privacy rules (404: video is not zero-data-retention)', async () => {
    const guarded = await createInferenceKey(env.t, { name: 'guarded' });
    const g = await env.t.call('POST', '/guardrails', { body: { name: `sora only ${backend}`, allowed_models: ['test/sora'] } });
    expect(g.status).toBe(201);
    expect((await env.t.call('POST', `/guardrails/${g.body.data.id}/assignments/keys`, { body: { key_hashes: [guarded.hash] } })).status).toBe(200);
    const blocked = await create({ model: 'test/veo', prompt: 'x' }, guarded.key);
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.message).toMatch(/^Blocked by guardrail "sora only/);
    expect((await create({ model: 'test/sora', prompt: 'allowed' }, guarded.key)).status).toBe(202);

    expect((await env.t.call('PATCH', '/organization/settings', { body: { enforce_zdr: true } })).status).toBe(200);
    try {
      const zdr = await create({ model: 'test/sora', prompt: 'x' });
      expect(zdr.status).toBe(404);
      expect(zdr.body.error.metadata.excluded_by).toContain('data_policy:zdr');
    } finally {
      await env.t.call('PATCH', '/organization/settings', { body: { enforce_zdr: false } });
    }
  });

  it('lists the video models with what they accept (public)', async () => {
    const res = await env.t.call('GET', '/videos/models', { key: null });
    expect(res.status).toBe(200);
    const ids = res.body.data.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['test/sora', 'test/veo', 'test/sora-fallback']));
    expect(ids).not.toContain('test/chat');
    const veo = res.body.data.find((m: any) => m.id === 'test/veo');
    expect(veo).toEqual({
      id: 'test/veo',
      canonical_slug: 'test/veo',
      hugging_face_id: null,
      name: 'Test Veo (Google Veo)',
      created: expect.any(Number),
      description: '',
      supported_resolutions: ['720p', '1080p', '4K'],
      supported_aspect_ratios: ['16:9', '9:16'],
      supported_sizes: null,
      supported_durations: [4, 6, 8],
      supported_frame_images: ['first_frame', 'last_frame'],
      generate_audio: true,
      seed: true,
      pricing_skus: { video_second: '0.15', video_second_4K: '0.35' },
      allowed_passthrough_parameters: ['negativePrompt', 'sampleCount'],
      creativity: null,
      upscale_factor: null,
    });
    // Video models are not chat models: not listed by /models/user, not routable by chat.
    const user = await env.call('GET', '/models/user');
    expect(user.body.data.map((m: any) => m.id)).not.toContain('test/veo');
    const chat = await env.call('POST', '/chat/completions', { body: { model: 'test/veo', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(404);
    // Its endpoints are listed as routable (status 0), like those of every other API.
    const endpoints = await env.t.call('GET', '/models/test/veo/endpoints', { key: null });
    expect(endpoints.status).toBe(200);
    expect(endpoints.body.data.endpoints.map((e: any) => e.status)).toEqual([0]);
  });

  it('documents the routes in the OpenAPI description', async () => {
    const doc = await env.t.call('GET', '/openapi.json', { key: null });
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/videos', '/videos/models', '/videos/{jobId}', '/videos/{jobId}/content', '/videos/{jobId}/cancel']));
  });
});
