/**
 * The official `@openrouter/sdk` (the hosted router's TypeScript SDK) pointed at the gateway: it validates every
 * answer against its own schemas, so each call here checks the gateway's answer shape as that SDK's users get it —
 * chat (plain and streamed), speech, transcriptions, embeddings, rerank, presets, keys, the calling key, generations, models, endpoints, workspaces and
 * their members, guardrails, organization members — and that
 * errors surface as its typed errors with the right status.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenRouter } from '@openrouter/sdk';
import * as errors from '@openrouter/sdk/models/errors';
import { simSpeechAudio } from '../../src/sim/tts.js';
import { startClockedEnv, type ClockedEnv } from '../chat/util.js';
import { ADMIN_KEY } from '../helpers.js';
import { speechCatalog } from '../speech/util.js';
import { embeddingCatalog } from '../embeddings/util.js';
import { simEmbedding } from '../../src/sim/embeddings.js';
import { simTranscript } from '../../src/sim/stt.js';
import { transcriptionCatalog, wav } from '../transcriptions/util.js';

let env: ClockedEnv;
/** An inference key's client, and the admin (management) key's. */
let sdk: OpenRouter;
let admin: OpenRouter;

beforeAll(async () => {
  const both = (url: string) => {
    const a = speechCatalog(url);
    const b = embeddingCatalog(url);
    const c = transcriptionCatalog(url);
    const rerank = {
      providers: [{ slug: 'sim-rr', name: 'Sim rr', protocol: 'openai', base_url: `${url}/sim-rr/v1`, no_auth: true }],
      models: [{ id: 'test/rerank', name: 'Rerank', output_modalities: ['rerank'] }],
      endpoints: [{ model: 'test/rerank', provider: 'sim-rr', upstream_model: 'rr-1', pricing: { prompt: '0.00000005', completion: '0' } }],
    };
    const all: Array<{ providers: object[]; models: object[]; endpoints: object[] }> = [a, b, c, rerank];
    return { providers: all.flatMap((x) => x.providers), models: all.flatMap((x) => x.models), endpoints: all.flatMap((x) => x.endpoints) };
  };
  env = await startClockedEnv('sqlite', { extra: both });
  sdk = new OpenRouter({ apiKey: env.key, serverURL: env.t.api });
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: env.t.api });
});
afterAll(async () => env?.close());
beforeEach(() => env.sim.resetKnobs());

const hello = (model = 'test/alpha') => ({ model, messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }] });

async function rejection(p: Promise<unknown>): Promise<errors.OpenRouterError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(errors.OpenRouterError);
    return e as errors.OpenRouterError;
  }
  throw new Error('expected an error');
}

describe('@openrouter/sdk: chat', () => {
  it('a plain completion: content, the serving model, usage with cost, the generation id', async () => {
    // A non-streamed call answers the completion (the declared result also covers a stream).
    const res = (await sdk.chat.send({ chatRequest: hello() })) as any;
    expect(res.id).toMatch(/^gen-/);
    expect(res.model).toBe('test/alpha');
    expect(res.choices[0].message.content).toMatch(/^Simulated reply to:/);
    expect(res.choices[0].finishReason).toBe('stop');
    expect(res.usage?.promptTokens).toBeGreaterThan(0);
    expect(res.usage?.cost).toBeGreaterThan(0);
    const gen = await sdk.generations.getGeneration({ id: res.id });
    expect(gen.data.id).toBe(res.id);
    expect(gen.data.model).toBe('test/alpha');
    expect(gen.data.totalCost).toBeCloseTo(res.usage!.cost!, 12);
  });

  it.each(['test/alpha', 'test/claude', 'test/gemini'])('a streamed completion (%s): chunks in order, usage once, on the last', async (model) => {
    const stream = await sdk.chat.send({ chatRequest: { ...hello(model), stream: true } });
    let text = '';
    const withUsage: number[] = [];
    let n = 0;
    for await (const chunk of stream as AsyncIterable<any>) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) withUsage.push(n);
      n++;
    }
    expect(text).toMatch(/^Simulated reply to:/);
    expect(withUsage).toEqual([n - 1]);
  });

  it('errors are its typed errors: 401, 402, 404, 400', async () => {
    const stranger = new OpenRouter({ apiKey: 'sk-gw-v1-' + '0'.repeat(64), serverURL: env.t.api });
    const e401 = await rejection(stranger.chat.send({ chatRequest: hello() }));
    expect(e401).toBeInstanceOf(errors.UnauthorizedResponseError);
    expect(e401.statusCode).toBe(401);

    const limited = await admin.apiKeys.create({ requestBody: { name: 'sdk-limited', limit: 0.000001 } });
    const spender = new OpenRouter({ apiKey: limited.key, serverURL: env.t.api });
    // The tiny limit cannot pay for the request's maximum cost: refused before any upstream call.
    const e402 = await rejection(spender.chat.send({ chatRequest: hello() }));
    expect(e402).toBeInstanceOf(errors.PaymentRequiredResponseError);
    expect(e402.statusCode).toBe(402);

    const e404 = await rejection(sdk.chat.send({ chatRequest: hello('nobody/nothing') }));
    expect(e404).toBeInstanceOf(errors.NotFoundResponseError);
    const e400 = await rejection(sdk.chat.send({ chatRequest: { ...hello(), temperature: 7 } }));
    expect(e400.statusCode).toBe(400);
  });
});

describe('@openrouter/sdk: speech and presets', () => {
  it('tts.createSpeech: the upstream audio bytes', async () => {
    const input = 'The quick brown fox.';
    const audio = await sdk.tts.createSpeech({ speechRequest: { model: 'test/tts', input, voice: 'alloy', responseFormat: 'mp3' } });
    const bytes = Buffer.from(await new Response(audio as ReadableStream).arrayBuffer());
    expect(bytes.equals(simSpeechAudio({ input, voice: 'alloy', format: 'mp3' }))).toBe(true);
  });

  it('stt.createTranscription (base64 JSON): the transcript and its usage', async () => {
    const audio = wav(1);
    const res = await sdk.stt.createTranscription({ sttRequest: { model: 'test/whisper', inputAudio: { data: audio.toString('base64'), format: 'wav' } } });
    expect(res.text).toBe(simTranscript(audio, 'whisper-sim'));
    expect(res.usage).toMatchObject({ seconds: 1, cost: 0.0001 });
  });

  it('rerank.rerank: sorted results with the documents, and usage', async () => {
    const res = await sdk.rerank.rerank({ requestBody: { model: 'test/rerank', query: 'capital of France', documents: ['Berlin is in Germany.', 'Paris is the capital of France.'], topN: 1 } });
    if (typeof res === 'string') throw new Error('expected a JSON answer');
    expect(res.model).toBe('test/rerank');
    expect(res.results).toHaveLength(1);
    expect(res.results[0]).toMatchObject({ index: 1, document: { text: 'Paris is the capital of France.' } });
    expect(res.usage?.totalTokens).toBeGreaterThan(0);
  });

  it('embeddings.generate and embeddings.listModels', async () => {
    const res = await sdk.embeddings.generate({ requestBody: { model: 'test/embed', input: ['one', 'two'], dimensions: 8, encodingFormat: 'float' } });
    if (typeof res === 'string') throw new Error('expected a JSON answer');
    expect(res.model).toBe('test/embed');
    expect(res.data.map((d) => d.embedding)).toEqual([simEmbedding('one', 'embed-sim-emb', 8), simEmbedding('two', 'embed-sim-emb', 8)]);
    expect(res.usage).toMatchObject({ promptTokens: 2, totalTokens: 2, cost: 0.0000002 });
    const page = await sdk.embeddings.listModels({});
    expect(page.result.data.map((m) => m.id)).toContain('test/embed');
    const e = await rejection(sdk.embeddings.generate({ requestBody: { model: 'test/alpha', input: 'x' } }));
    expect(e.statusCode).toBe(400);
  });

  it('presets from a chat, a responses and a messages body; listed, read, versioned, and used by chat', async () => {
    const p = await admin.presets.createPresetsChatCompletions({ slug: 'sdk-brief', chatRequest: { model: 'test/alpha', temperature: 0.3, messages: [{ role: 'system', content: 'Be brief.' }] } });
    expect(p.data.slug).toBe('sdk-brief');
    await admin.presets.createPresetsResponses({ slug: 'sdk-resp', responsesRequest: { model: 'test/alpha', instructions: 'Answer in French.' } });
    await admin.presets.createPresetsMessages({ slug: 'sdk-msg', messagesRequest: { model: 'test/alpha', maxTokens: 10, messages: [] } });
    const slugs = (await admin.presets.list({})).result.data.map((x) => x.slug);
    expect(slugs).toEqual(expect.arrayContaining(['sdk-brief', 'sdk-resp', 'sdk-msg']));
    expect((await admin.presets.get({ slug: 'sdk-brief' })).data.slug).toBe('sdk-brief');
    const versions = (await admin.presets.listVersions({ slug: 'sdk-brief' })).result.data;
    expect(versions.map((v) => v?.config)).toEqual([{ model: 'test/alpha', temperature: 0.3 }]);
    expect((await admin.presets.getVersion({ slug: 'sdk-brief', version: '1' })).data?.config).toEqual({ model: 'test/alpha', temperature: 0.3 });
    const res = (await sdk.chat.send({ chatRequest: { model: '@preset/sdk-brief', messages: [{ role: 'user', content: 'hi' }] } })) as any;
    expect(res.model).toBe('test/alpha');
    const sent = env.sim.requests.at(-1)!.body as { temperature: number; messages: Array<{ role: string; content: string }> };
    expect(sent.temperature).toBe(0.3);
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });
});

describe('@openrouter/sdk: keys, models, workspaces, guardrails, members', () => {
  it('API keys: create (secret once), list, get, update, the calling key, delete', async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: 'sdk-key', limit: 5, limitReset: 'monthly' } });
    expect(created.key).toMatch(/^sk-gw-v1-/);
    const hash = created.data.hash;
    expect(created.data).toMatchObject({ name: 'sdk-key', limit: 5, limitReset: 'monthly', disabled: false, externalUser: null });
    const listed = await admin.apiKeys.list();
    expect(listed.data.map((k) => k.hash)).toContain(hash);
    expect((await admin.apiKeys.get({ hash })).data.name).toBe('sdk-key');
    const updated = await admin.apiKeys.update({ hash, requestBody: { name: 'sdk-key-2', limit: 7 } });
    expect(updated.data).toMatchObject({ name: 'sdk-key-2', limit: 7 });

    const own = new OpenRouter({ apiKey: created.key, serverURL: env.t.api });
    const me = await own.apiKeys.getCurrentKeyMetadata();
    expect(me.data).toMatchObject({ limit: 7, limitReset: 'monthly', isManagementKey: false, isFreeTier: false, allowedDataRegions: ['global'] });
    expect(me.data.workspaceId).toBe(created.data.workspaceId);
    expect(me.data.organizationId).toEqual(expect.any(String));
    expect(me.data.rateLimit.requests).toBe(-1);

    expect((await admin.apiKeys.delete({ hash })).deleted).toBe(true);
    const gone = await rejection(admin.apiKeys.get({ hash }));
    expect(gone.statusCode).toBe(404);
  });

  it('models: list (unknown prices as "-1"), count, the calling key\'s models', async () => {
    const all = (await sdk.models.list()).result.data;
    const ids = all.map((m) => m.id);
    expect(ids).toContain('test/alpha');
    expect(all.find((m) => m.id === 'test/alpha')!.pricing).toMatchObject({ prompt: '0.000001', completion: '0.000002' });
    expect(all.find((m) => m.id === 'test/unpriced')!.pricing).toMatchObject({ prompt: '-1', completion: '-1' });
    expect((await sdk.models.count()).data.count).toBe(ids.length);
    // This operation takes its credential per call in the SDK.
    const mine = (await sdk.models.listForUser({ bearer: env.key })).result.data;
    expect(mine.map((m) => m.id)).toContain('test/alpha');
  });

  it("a model's endpoints and the zero-data-retention endpoints", async () => {
    const eps = (await sdk.endpoints.list({ author: 'test', slug: 'alpha' })).data.endpoints;
    expect(eps.map((e) => e.tag).sort()).toEqual(['sim-a', 'sim-b']);
    for (const e of eps) expect(e.supportsToolChoice).toEqual(expect.objectContaining({ auto: expect.any(Boolean), required: expect.any(Boolean) }));
    const zdr = (await sdk.endpoints.listZdrEndpoints()).data;
    const tags = zdr.map((e) => `${e.modelId}|${e.tag}`);
    expect(tags).toContain('test/alpha|sim-a');
    expect(tags).not.toContain('test/alpha|sim-b'); // sim-b retains prompts and trains on them
  });

  it('workspaces, guardrails and organization members', async () => {
    const ws = await admin.workspaces.create({ createWorkspaceRequest: { name: 'SDK workspace', slug: 'sdk-ws' } });
    expect(ws.data.slug).toBe('sdk-ws');
    const list = await admin.workspaces.list();
    expect(list.result.data.map((w) => w.slug)).toContain('sdk-ws');
    expect((await admin.workspaces.get({ id: ws.data.id })).data.name).toBe('SDK workspace');

    // Members: the creator is in; an organization member is added, listed and removed.
    const added = await admin.organization.listMembers();
    const ownerId = added.result.data[0].id;
    const newcomer = await env.t.call('POST', '/organization/members', { body: { email: 'sdk-member@example.com' } });
    const inWs = await admin.workspaces.listMembers({ id: 'sdk-ws' });
    expect(inWs.result.data.map((m) => m.userId)).toEqual([ownerId]);
    const bulk = await admin.workspaces.bulkAddMembers({ id: 'sdk-ws', bulkAddWorkspaceMembersRequest: { userIds: [newcomer.body.data.id] } });
    expect(bulk.addedCount).toBe(1);
    expect(bulk.data[0]).toMatchObject({ userId: newcomer.body.data.id, role: 'member', workspaceId: ws.data.id });
    const removed = await admin.workspaces.bulkRemoveMembers({ id: 'sdk-ws', bulkRemoveWorkspaceMembersRequest: { userIds: [newcomer.body.data.id] } });
    expect(removed.removedCount).toBe(1);

    const g = await admin.guardrails.create({ createGuardrailRequest: { name: 'sdk guardrail', allowedModels: ['test/alpha'] } });
    expect(g.data.name).toBe('sdk guardrail');
    expect((await admin.guardrails.get({ id: g.data.id })).data.allowedModels).toEqual(['test/alpha']);
    expect((await admin.guardrails.list()).result.data.map((x) => x.id)).toContain(g.data.id);
    expect((await admin.guardrails.delete({ id: g.data.id })).deleted).toBe(true);

    const members = await admin.organization.listMembers();
    expect(members.result.data.length).toBeGreaterThan(0);
    expect(members.result.data[0].role).toBe('org:admin');
  });
});
