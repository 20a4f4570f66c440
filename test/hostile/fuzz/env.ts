/**
 * The fuzzed gateway: one healthy simulator behind every API's test catalog (chat, embeddings, speech,
 * transcriptions, video, images), and valid example bodies per operation that the mutations start from half the time.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createSimulator } from '../../../src/sim/index.js';
import { simCatalog, type ChatEnv } from '../../chat-helpers.js';
import { createInferenceKey, startGateway, type Backend } from '../../helpers.js';
import { embeddingCatalog } from '../../embeddings/util.js';
import { speechCatalog } from '../../speech/util.js';
import { transcriptionCatalog, wav } from '../../transcriptions/util.js';
import { videoCatalog } from '../../videos/util.js';
import { imageCatalog } from '../../images/util.js';

type Catalog = { providers: object[]; models: object[]; endpoints: object[] };

function merge(parts: Catalog[]): Catalog {
  const seen = new Set<string>();
  const providers = parts.flatMap((p) => p.providers).filter((p) => {
    const slug = (p as { slug: string }).slug;
    return !seen.has(`p:${slug}`) && seen.add(`p:${slug}`);
  });
  const models = parts.flatMap((p) => p.models).filter((m) => {
    const id = (m as { id: string }).id;
    return !seen.has(`m:${id}`) && seen.add(`m:${id}`);
  });
  return { providers, models, endpoints: parts.flatMap((p) => p.endpoints) };
}

export async function startFuzzEnv(backend: Backend): Promise<ChatEnv> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-fuzz-'));
  const file = join(dir, 'gateway.yaml');
  const catalog = merge([simCatalog(sim.url) as Catalog, embeddingCatalog(sim.url) as Catalog, speechCatalog(sim.url) as Catalog, transcriptionCatalog(sim.url) as Catalog, videoCatalog(sim.url) as Catalog, imageCatalog(sim.url) as Catalog]);
  writeFileSync(file, stringify(catalog));
  // An encryption key, so that the BYOK routes are fuzzed past their 503 for an unconfigured gateway.
  const t = await startGateway(backend, { env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false', GATEWAY_METRICS: 'public', GATEWAY_ENCRYPTION_KEY: 'fuzz-test-encryption-key-0123456789abcdef' } });
  const { key, hash } = await createInferenceKey(t, { name: 'fuzzer' });
  return {
    sim,
    t,
    key,
    keyHash: hash,
    close: async () => {
      await t.close();
      await sim.close();
    },
  };
}

const USER = [{ role: 'user', content: 'hello' }];

/** Valid bodies by `METHOD path` (path as served, under /api/v1). */
export function examples(keyHash: string, memberId: string): Record<string, unknown[]> {
  const chat = [
    { model: 'test/alpha', messages: USER, max_tokens: 5 },
    { model: 'test/claude', messages: USER, stream: true, temperature: 0.5, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }] },
    { model: 'test/gemini', messages: [{ role: 'system', content: 's' }, ...USER], session_id: 's1', user: 'u1', metadata: { a: 'b' }, provider: { order: ['sim-a'] } },
    { model: 'test/responses', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], response_format: { type: 'json_object' } },
  ];
  const messages = [
    { model: 'test/claude', max_tokens: 10, messages: USER },
    { model: 'test/alpha', max_tokens: 10, system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true },
    { model: 'test/gemini', max_tokens: 10, messages: USER, tools: [{ name: 't', input_schema: { type: 'object' } }], thinking: { type: 'enabled', budget_tokens: 1024 } },
  ];
  const responses = [
    { model: 'test/responses', input: 'hello' },
    { model: 'test/alpha', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], stream: true, max_output_tokens: 20 },
    { model: 'test/claude', instructions: 'x', input: 'hi', reasoning: { effort: 'low' } },
  ];
  const audio = wav(1).toString('base64');
  const a = '/api/v1';
  return {
    [`POST ${a}/chat/completions`]: chat,
    [`POST ${a}/messages`]: messages,
    [`POST ${a}/messages/count_tokens`]: [{ model: 'test/claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'tool_result', tool_use_id: 'x', content: [{ type: 'text', text: 'r' }] }] }] }],
    [`POST ${a}/responses`]: responses,
    [`POST ${a}/presets/{slug}/chat/completions`]: [{ model: 'test/alpha', temperature: 0.2, system_prompt: 'hi' }],
    [`POST ${a}/presets/{slug}/messages`]: [{ model: 'test/claude', max_tokens: 100, system: 'hi' }],
    [`POST ${a}/presets/{slug}/responses`]: [{ model: 'test/responses', instructions: 'hi', reasoning: { effort: 'low' } }],
    [`POST ${a}/embeddings`]: [{ model: 'test/embed', input: 'hello' }, { model: 'test/embed', input: ['a', 'b'], dimensions: 8, encoding_format: 'base64' }],
    [`POST ${a}/audio/speech`]: [{ model: 'test/tts-gemini', input: 'hello', voice: 'alloy' }, { model: 'test/tts', input: 'hi', voice: 'alloy', response_format: 'pcm', stream_format: 'sse' }],
    [`POST ${a}/audio/transcriptions`]: [{ model: 'test/whisper', input_audio: { data: audio, format: 'wav' } }, { model: 'test/transcribe', input_audio: { data: audio, format: 'wav' }, response_format: 'srt' }],
    [`POST ${a}/images`]: [
      { model: 'test/gpt-image', prompt: 'a cat', n: 2, quality: 'low', size: '1024x1024' },
      { model: 'test/gemini-image', prompt: 'a dog', aspect_ratio: '16:9', seed: 3 },
      { model: 'test/dalle', prompt: 'a cow', input_references: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
    ],
    [`POST ${a}/images/generations`]: [{ model: 'test/gpt-image', prompt: 'a cat', response_format: 'b64_json' }],
    [`POST ${a}/videos`]: [{ model: 'test/sora', prompt: 'a cat', seconds: 4, callback_url: 'https://example.com/hook' }, { model: 'test/veo', prompt: 'a dog', aspect_ratio: '16:9' }],
    [`POST ${a}/keys`]: [{ name: 'k', limit: 1, limit_reset: 'daily', rate_limit: { requests: 5, interval: '1m' } }, { name: 'm', management: true, expires_at: '2030-01-01T00:00:00Z' }],
    [`PATCH ${a}/keys/{hash}`]: [{ name: 'renamed', limit: 5 }, { rate_limit: null }],
    [`POST ${a}/workspaces`]: [{ name: 'W', slug: 'w-fuzz', description: 'd' }],
    [`PATCH ${a}/workspaces/{id}`]: [{ name: 'W2', default_text_model: 'test/alpha' }],
    [`POST ${a}/workspaces/{id}/members/add`]: [{ user_ids: [memberId] }],
    [`POST ${a}/workspaces/{id}/members/remove`]: [{ user_ids: [memberId] }],
    [`POST ${a}/guardrails`]: [{ name: 'g', limit_usd: 10, reset_interval: 'daily', allowed_providers: ['sim-a'], allowed_models: ['test/alpha'] }],
    [`PATCH ${a}/guardrails/{id}`]: [{ description: 'x', limit_usd: 2 }],
    [`POST ${a}/guardrails/{id}/assignments/keys`]: [{ key_hashes: [keyHash] }],
    [`POST ${a}/guardrails/{id}/assignments/keys/remove`]: [{ key_hashes: [keyHash] }],
    [`POST ${a}/guardrails/{id}/assignments/members`]: [{ member_user_ids: [memberId] }],
    [`POST ${a}/guardrails/{id}/assignments/members/remove`]: [{ member_user_ids: [memberId] }],
    [`POST ${a}/organization/members`]: [{ email: 'x@example.com', role: 'org:member' }],
  };
}
