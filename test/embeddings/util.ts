/**
 * Embeddings test harness: simulated embeddings providers added to the chat test catalog, and raw calls to
 * POST /embeddings.
 *
 * Providers (all on one simulator, each its own knobs): `sim-emb` and `sim-emb2` (OpenAI embeddings), `sim-emb-b64`
 * (answers base64 whatever is asked) and `sim-emb-float` (answers floats whatever is asked), `sim-emb-dims` (ignores
 * `dimensions`: always 8 numbers), `sim-emb-nousage` (reports no usage), `sim-emb-slow` (short timeouts),
 * `sim-emb-keyed` (needs a key nobody configured).
 */
import type { ChatEnv } from '../chat-helpers.js';

/** USD per input token of the embeddings endpoints ($0.10 per million); sim-emb2 costs twice that. */
export const EMB_PRICE = '0.0000001';
export const EMB_PRICE_2 = '0.0000002';

export function embeddingCatalog(simUrl: string) {
  const zdr = { training: false, retains_prompts: false, zdr: true };
  const provider = (slug: string, extra: Record<string, unknown> = {}) => ({ slug, name: `Sim ${slug.slice(4)}`, protocol: 'openai', base_url: `${simUrl}/${slug}/v1`, no_auth: true, data_policy: zdr, ...extra });
  const model = (id: string) => ({ id, name: id, context_length: 8192, input_modalities: ['text'], output_modalities: ['embeddings'] });
  const ep = (model: string, provider: string, extra: Record<string, unknown> = {}) => ({
    model,
    provider,
    upstream_model: `${model.slice(5)}-${provider}`,
    pricing: { prompt: EMB_PRICE, completion: '0' },
    supported_parameters: ['dimensions', 'encoding_format', 'user'],
    ...extra,
  });
  return {
    providers: [
      provider('sim-emb'),
      provider('sim-emb2'),
      provider('sim-emb-b64', { headers: { 'x-sim-embedding-format': 'base64' } }),
      provider('sim-emb-float', { headers: { 'x-sim-embedding-format': 'float' } }),
      provider('sim-emb-dims', { headers: { 'x-sim-embedding-dimensions': '8' } }),
      provider('sim-emb-nousage', { headers: { 'x-sim-embedding-usage': 'none' } }),
      provider('sim-emb-slow', { timeouts: { first_byte_ms: 300, idle_ms: 300 } }),
      { ...provider('sim-emb-keyed'), no_auth: false, api_key_env: 'SIM_EMB_KEYED_API_KEY_UNSET' },
    ],
    models: ['test/embed', 'test/embed-fallback', 'test/embed-nodims', 'test/embed-b64', 'test/embed-float', 'test/embed-dims', 'test/embed-nousage', 'test/embed-slow', 'test/embed-nokey', 'test/embed-unpriced', 'test/embed-short'].map(model),
    endpoints: [
      ep('test/embed', 'sim-emb'),
      ep('test/embed-fallback', 'sim-emb'),
      ep('test/embed-fallback', 'sim-emb2', { pricing: { prompt: EMB_PRICE_2, completion: '0' } }),
      ep('test/embed-nodims', 'sim-emb', { supported_parameters: ['encoding_format', 'user'] }),
      ep('test/embed-b64', 'sim-emb-b64'),
      ep('test/embed-float', 'sim-emb-float', { supported_parameters: ['dimensions'] }),
      ep('test/embed-dims', 'sim-emb-dims'),
      ep('test/embed-dims', 'sim-emb2', { pricing: { prompt: EMB_PRICE_2, completion: '0' } }),
      ep('test/embed-nousage', 'sim-emb-nousage'),
      ep('test/embed-slow', 'sim-emb-slow'),
      ep('test/embed-nokey', 'sim-emb-keyed'),
      ep('test/embed-unpriced', 'sim-emb', { pricing: null }),
      ep('test/embed-short', 'sim-emb', { context_length: 16 }),
    ],
  };
}

export interface EmbeddingsReply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** POST /embeddings with the env's inference key (or `key`). */
export async function embed(env: ChatEnv, body: unknown, opts: { key?: string | null; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<EmbeddingsReply> {
  const key = opts.key === undefined ? env.key : opts.key;
  const res = await fetch(`${env.t.api}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: opts.signal,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
