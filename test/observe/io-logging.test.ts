/**
 * I/O logging (docs/observability.md): a workspace's settings decide which requests keep their input and output
 * (switch, key list, sampling); GET /generation/content returns them in the hosted API's shape; GET /generations links
 * to them; the retention job deletes them; with logging off, nothing of the content reaches the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey } from '../helpers.js';
import { expectStatus } from '../api/util.js';
import { findInDatabase, seeded, startObserveEnv, type ObserveEnv } from './util.js';

describe.each(BACKENDS)('I/O logging (%s)', (backend) => {
  let env: ObserveEnv;
  let wsId: string;

  beforeAll(async () => {
    env = await startObserveEnv(backend, { gateway: { ioRng: seeded(7) } });
    wsId = (await env.t.gw.svc.store.getDefaultWorkspace())!.id;
  });
  afterAll(async () => env?.close());

  const settings = async (patch: Record<string, unknown>) => expectStatus(await env.t.call('PATCH', `/workspaces/${wsId}`, { body: patch }), 200);
  const chat = async (body: Record<string, unknown>, key = env.key) => {
    const res = await env.t.call('POST', '/chat/completions', { key, body: { model: 'test/alpha', ...body } });
    expectStatus(res, 200);
    return res.body.id as string;
  };
  const content = async (id: string) => {
    await env.t.gw.svc.recorder.flush();
    return env.t.call('GET', `/generation/content?id=${encodeURIComponent(id)}`);
  };

  it('off (the default): no content stored anywhere — the marker is nowhere in the database — and the endpoint says 404', async () => {
    const marker = `MARKER-OFF-${backend}-4f9a`;
    env.sim.setKnobs('sim-a', { content: `reply ${marker}` });
    const id = await chat({ messages: [{ role: 'user', content: `say ${marker}` }] });
    const streamed = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', stream: true, messages: [{ role: 'user', content: marker }] } });
    expectStatus(streamed, 200);
    env.sim.resetKnobs();
    const res = await content(id);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe(404);
    expect(await findInDatabase(env.t, marker)).toEqual([]);
    const log = await env.t.call('GET', `/generations?limit=5`);
    expect(log.body.data.every((g: { content_url: string | null }) => g.content_url === null)).toBe(true);
  });

  it('on: a chat answer keeps its messages and completion; a stream its assembled output; GET /generations links to both', async () => {
    await settings({ is_observability_io_logging_enabled: true, io_logging_sampling_rate: 1, io_logging_api_key_ids: null });
    env.sim.setKnobs('sim-a', { content: 'The answer is 42.' });
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'meaning of life?' },
    ];
    const id = await chat({ messages });
    const res = await content(id);
    expectStatus(res, 200);
    expect(res.body).toEqual({ data: { input: { messages }, output: { completion: 'The answer is 42.', reasoning: null, tool_calls: null }, error: null } });
    // The search the "off" case relies on does find logged content.
    expect((await findInDatabase(env.t, 'meaning of life?')).length).toBeGreaterThan(0);

    const streamed = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', stream: true, messages } });
    expectStatus(streamed, 200);
    const sid = /"id":"(gen-[^"]+)"/.exec(streamed.body as string)![1];
    const sc = await content(sid);
    expectStatus(sc, 200);
    expect(sc.body.data.output.completion).toBe('The answer is 42.');
    expect(sc.body.data.input).toEqual({ messages });

    const log = await env.t.call('GET', '/generations?limit=2');
    expect(log.body.data.map((g: { content_url: string }) => g.content_url)).toEqual([`/api/v1/generation/content?id=${sid}`, `/api/v1/generation/content?id=${id}`]);
    env.sim.resetKnobs();
  });

  it('keeps tool calls, the messages API, embeddings input, and every failed attempt of an error', async () => {
    const tool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
    env.sim.setKnobs('sim-a', { toolCall: true });
    const tid = await chat({ messages: [{ role: 'user', content: 'weather?' }], tools: [tool] });
    const tc = (await content(tid)).body.data;
    expect(tc.output.tool_calls).toHaveLength(1);
    expect(tc.output.tool_calls[0].name).toBe('get_weather');
    expect(() => JSON.parse(tc.output.tool_calls[0].arguments)).not.toThrow();
    env.sim.resetKnobs();

    const m = await env.t.call('POST', '/messages', { key: env.key, body: { model: 'test/claude', max_tokens: 50, system: 'sys', messages: [{ role: 'user', content: 'hi claude' }], stream: true } });
    expectStatus(m, 200);
    const mid = m.headers.get('x-generation-id') ?? /"id":"(gen-[^"]+)"/.exec(m.body as string)?.[1];
    const mc = (await content(mid!)).body.data;
    expect(mc.input.messages).toEqual([{ role: 'system', content: 'sys' }, { role: 'user', content: 'hi claude' }]);
    expect(typeof mc.output.completion).toBe('string');
    expect(mc.output.completion.length).toBeGreaterThan(0);

    const e = await env.t.call('POST', '/embeddings', { key: env.key, body: { model: 'test/embed', input: 'embed me' } });
    expectStatus(e, 200);
    expect((await content(e.body.id)).body.data).toEqual({ input: { prompt: 'embed me' }, output: { completion: null, reasoning: null, tool_calls: null }, error: null });

    // Both endpoints of test/alpha fail: the error keeps the last one and the one before it.
    env.sim.setKnobs('sim-a', { errorStatus: 503 });
    env.sim.setKnobs('sim-b', { errorStatus: 429 });
    const failed = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'fail' }] } });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    env.sim.resetKnobs();
    env.advance(31_000); // past the failed endpoints' penalty
    await env.t.gw.svc.recorder.flush();
    const last = (await env.t.call('GET', '/generations?limit=1')).body.data[0];
    const err = (await content(last.id)).body.data.error;
    expect(err.status).toBe(failed.status);
    expect(err.previous_errors).toHaveLength(1);
    expect([err.provider_name, err.previous_errors[0].provider_name].sort()).toEqual(['sim-a', 'sim-b']);
    expect(typeof err.raw).toBe('string');
  });

  it('only the listed keys are logged', async () => {
    const other = await createInferenceKey(env.t, { name: 'listed' });
    await settings({ io_logging_api_key_ids: [other.data.id] });
    const mine = await chat({ messages: [{ role: 'user', content: 'not listed' }] });
    const theirs = await chat({ messages: [{ role: 'user', content: 'listed' }] }, other.key);
    expect((await content(mine)).status).toBe(404);
    expectStatus(await content(theirs), 200);
    // An inference key reads its own generations' content, not another key's.
    expect((await env.t.call('GET', `/generation/content?id=${theirs}`, { key: env.key })).status).toBe(404);
    expectStatus(await env.t.call('GET', `/generation/content?id=${theirs}`, { key: other.key }), 200);
    await settings({ io_logging_api_key_ids: null });
  });

  it('samples the configured fraction (seeded)', async () => {
    await settings({ io_logging_sampling_rate: 0.3 });
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push(await chat({ messages: [{ role: 'user', content: `s${i}` }] }));
    await env.t.gw.svc.recorder.flush();
    const logged = await env.t.gw.svc.store.generationContentIds(ids);
    // 120 draws at 0.3: 36 expected; a fixed seed makes the count the same every run, and it stays near the rate.
    expect(logged.size).toBeGreaterThan(20);
    expect(logged.size).toBeLessThan(52);
    await settings({ io_logging_sampling_rate: 1 });
  });

  it('the retention job deletes content past GATEWAY_IO_LOG_RETENTION_DAYS (30 by default)', async () => {
    const id = await chat({ messages: [{ role: 'user', content: 'keep me a while' }] });
    await env.t.gw.svc.recorder.flush();
    env.advance(29 * 86_400_000);
    await env.t.gw.svc.io.sweep();
    expectStatus(await content(id), 200);
    env.advance(2 * 86_400_000);
    expect(await env.t.gw.svc.io.sweep()).toBeGreaterThan(0);
    expect((await content(id)).status).toBe(404);
    await settings({ is_observability_io_logging_enabled: false });
  });

  it('GET /generation/content validates its query', async () => {
    const res = await env.t.call('GET', '/generation/content');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/id/);
  });
});
