/**
 * Text-to-speech (`POST /audio/speech`, docs/speech.md): policy and limits, routing over the speech endpoints,
 * upstream attempts with fallbacks until the first audio byte, the audio relayed as it arrives, cost and the
 * generation record. The HTTP route only validates and hands over.
 *
 * Decisions:
 * - Routing reuses `planRoute` over `catalog.speechRoute` (the endpoints with a `speech_protocol`), with the key's
 *   organization settings and guardrails applied as for chat (same policy functions, 403/404 refusals, budgets) and
 *   the key's own limit (402).
 * - Format: an endpoint that cannot produce the requested format natively (`audio_formats`, else its protocol's) is
 *   skipped (`unsupported_parameter` in the plan), never transcoded; an answer that turns out to be another format is
 *   refused before any byte is relayed (see providers/speech.ts), and the next endpoint is tried.
 * - Fallbacks: any failure before the first audio byte moves on to the next endpoint. After it, the status (200) and
 *   Content-Type are committed: a failure then cuts the connection (the client sees an incomplete body, never an
 *   audio file that silently ends early).
 * - Price: `characters` × `pricing.characters`, plus the tokens the provider reports at the token prices, plus
 *   `pricing.request`; exact decimal arithmetic (src/core/pricing.ts). For ranking and `max_price`, a per-character
 *   price counts as a prompt price (per million characters).
 * - Record: `api_type: "tts"`; `tokens_prompt` is the character count on per-character endpoints, else the
 *   provider's text tokens; `tokens_completion` its audio tokens.
 */
import type { ServerResponse } from 'node:http';
import type { AudioFormat, EndpointDef, Pricing } from '../core/catalog-types.js';
import { computeCost, formatPrice, type TokenUsage } from '../core/pricing.js';
import type { ProviderPreferences, ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute, type Attempt, type RouteCatalog, type RoutePlan } from '../core/routing.js';
import { pricedRoute, type PricedRoute } from '../core/priced-route.js';
import { badRequest } from '../core/errors.js';
import { UpstreamError } from '../core/provider-errors.js';
import { speechAdapter, type SpeechAdapter } from '../providers/registry.js';
import type { AudioDecoder } from '../providers/speech.js';
import type { UpstreamExchange } from '../providers/http.js';
import type { GenerationRow } from '../store/types.js';
import type { ApiCall, ApiServiceDeps } from './api-deps.js';
import { attemptKey } from './byok.js';
import { answerRecord } from './generations.js';
import type { AttemptLog } from './attempts/errors.js';
import { planned, runGeneration } from './attempts/runner.js';
import { sendAttempt } from './attempts/send.js';
import { newGenerationId } from './generation-id.js';
import { drained } from './reply-stream.js';
import { costAsk } from '../core/spend-ask.js';

export const CONTENT_TYPES: Record<AudioFormat, string> = { mp3: 'audio/mpeg', pcm: 'audio/pcm' };

/** The speech request body (schema-validated by the route). */
export interface SpeechBody {
  model: string;
  input: string;
  voice: string;
  response_format?: AudioFormat;
  speed?: number;
  provider?: (ProviderPreferences & { options?: Record<string, Record<string, unknown> | null> }) | null;
}

export interface PreparedSpeech {
  body: SpeechBody;
  format: AudioFormat;
  characters: number;
  plan: RoutePlan;
  /** Ends the request's in-flight count against the key's limit (idempotent; called by the record and the route). */
}

/** The formats an endpoint produces natively. */
export function audioFormatsOf(e: EndpointDef): readonly AudioFormat[] {
  return e.audio_formats ?? (e.speech_protocol ? speechAdapter(e.speech_protocol).formats : []);
}

/**
 * The options of the matched provider: `provider.options[<provider slug>]`, then `[<endpoint tag>]` when the tag
 * differs (its fields win). Every other key — other providers, unknown names — is dropped; null values mean unset.
 */
export function optionsFor(all: Record<string, unknown> | null | undefined, slug: string, tag: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!all) return out;
  for (const k of tag !== slug ? [slug, tag] : [slug]) {
    const v = all[k];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) continue;
    for (const [name, value] of Object.entries(v)) if (value !== null && value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Cost of one speech generation: characters at `pricing.characters`, reported tokens at the token prices, and the
 * per-request price, in one exact computation (the per-character price rides in computeCost's per-unit slot).
 */
export function speechCost(pricing: Pricing | null, characters: number, usage: TokenUsage | null): number | null {
  if (!pricing) return null;
  const perChar = pricing.characters;
  const p: Pricing = { ...pricing, image: perChar ?? '0' };
  return computeCost(p, usage ?? { promptTokens: 0, completionTokens: 0 }, { images: perChar ? characters : 0 }).cost;
}

export class SpeechService {
  /** The speech endpoints as routing sees them (per-character prices counted as prompt prices), and their originals. */
  private readonly route: RouteCatalog;
  private readonly original: PricedRoute['original'];

  constructor(
    private readonly deps: ApiServiceDeps,
  ) {
    // For ranking and max_price, a per-character price counts as a prompt price.
    const priced = pricedRoute(deps.catalog.speechRoute, (p) => (p.characters ? { ...p, prompt: formatPrice(Number(p.prompt) + Number(p.characters)) } : null));
    this.route = priced.route;
    this.original = priced.original;
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  private endpoint(a: Attempt): EndpointDef {
    return this.original(a.endpoint);
  }

  // ---- preparation -------------------------------------------------------------------------------

  /** Policy, limits and the route. Throws HttpError (4xx) when the request cannot be served. */
  async prepare(body: SpeechBody, call: ApiCall): Promise<PreparedSpeech> {
    const model = body.model;
    const format = body.response_format ?? 'pcm';
    const known = this.route.models.has(model);
    if (known && (this.route.endpointsByModel.get(model) ?? []).length === 0) {
      throw badRequest(`${model} is not a text-to-speech model: it has no speech endpoint`, { field: 'model', error_type: 'invalid_request' });
    }

    // ---- organization settings and guardrails: the same functions as chat (src/services/guardrails.ts) -----------
    // Organization settings and guardrails: the same policy functions as chat (src/services/guardrails.ts).
    const g = this.deps.guardrails;
    const { endpointPolicy, defaultSort: policySort } = g ? await g.admitModel(call.key, this.route, model) : { endpointPolicy: undefined, defaultSort: null };

    const workspace = this.deps.workspaces ? await this.deps.workspaces.cached(call.key.workspace_id) : null;
    // Routing preferences; `options` are the providers' own (see optionsFor).
    const provider: ProviderPreferences = { ...(body.provider ?? {}) };
    delete (provider as { options?: unknown }).options;
    const plan = planRoute({
      now: this.now(),
      rng: this.deps.rng ?? Math.random,
      models: [model],
      catalog: this.route,
      hasCredentials: this.deps.catalog.hasCredentials,
      byok: this.deps.byok?.routing(call.key),
      health: this.deps.health.health,
      // Policy first (its own reason), then the format: endpoints that cannot produce it are skipped.
      endpointPolicy: (ep, p) => endpointPolicy?.(ep, p) ?? (audioFormatsOf(ep).includes(format) ? undefined : 'unsupported_parameter'),
      params: [],
      provider,
      defaultSort: (workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? policySort,
    });
    // Emptied by the format filter (planRoute's latest filter wins the classification): say so.
    if (plan.error?.code === 'constraint_filtered' && plan.error.excluded_by?.includes('unsupported_parameter')) {
      const others = (plan.error.excluded_by ?? []).filter((r) => r !== 'unsupported_parameter');
      plan.error.message = `No endpoint of ${model} can produce response_format "${format}"${others.length > 0 ? ` (other endpoints excluded: ${others.join(', ')})` : ''}`;
    }
    // Spending limits are reserved per attempt (its known per-character cost) by the runner, see `stream`.
    return { body, format, characters: Array.from(body.input).length, plan };
  }

  // ---- records and errors ------------------------------------------------------------------------

  /** gateway_metadata of an error reply; `is_byok`: whether the attempt that failed last ran on a BYOK credential. */
  private metadata(p: PreparedSpeech, attempts: AttemptLog[], dropped: string[], last: Attempt | null): Record<string, unknown> {
    return {
      requested: p.body.model,
      strategy: p.plan.strategy,
      region: 'self-hosted',
      is_byok: last?.byok !== undefined,
      response_format: p.format,
      endpoints: {
        total: p.plan.considered.filter((c) => c.provider).length,
        available: p.plan.considered.filter((c) => !c.excluded && c.provider).map((c) => ({ model: c.model, provider: c.provider })),
      },
      attempts,
      excluded: p.plan.considered.filter((c) => c.excluded).map((c) => ({ model: c.model, provider: c.provider, reason: c.excluded })),
      ...(dropped.length > 0 ? { dropped_parameters: dropped } : {}),
    };
  }

  private record(
    p: PreparedSpeech,
    call: ApiCall,
    id: string,
    o: { attempt: Attempt | null; status: number; error: { status: number; message: string } | null; usage: TokenUsage | null; cost: number | null; started: number; firstByteAt: number | null; upstreamId: string | null; native: string | null; cancelled: boolean },
    attempts: AttemptLog[],
  ): void {
    const end = this.now();
    const endpoint = o.attempt ? this.endpoint(o.attempt) : null;
    const perChar = Boolean(endpoint?.pricing?.characters);
    // A single answer's record, streamed: with the time to the first audio byte and the provider's finish reason.
    const row: GenerationRow = {
      ...answerRecord({
        ...o,
        id,
        requestId: call.requestId,
        key: call.key,
        apiType: 'tts',
        requestedModel: p.body.model,
        promptTokens: o.attempt && perChar && !o.usage ? p.characters : (o.usage?.promptTokens ?? 0),
        completionTokens: o.usage?.completionTokens ?? 0,
        end,
        attempts,
      }),
      streamed: true,
      finish_reason: o.status === 200 ? (o.native === 'MAX_TOKENS' ? 'length' : 'stop') : o.error ? 'error' : null,
      native_finish_reason: o.native,
      ttft_ms: o.firstByteAt !== null ? Math.round(o.firstByteAt - o.started) : null,
      generation_time_ms: o.firstByteAt !== null ? Math.round(end - o.firstByteAt) : null,
    };
    this.deps.recorder.record(row);
  }

  // ---- the call ----------------------------------------------------------------------------------

  /**
   * Tries the planned endpoints in order and relays the audio of the first that answers with audio. Throws HttpError
   * when every attempt failed before the first byte (the route answers it as a JSON error); returns once the reply
   * ended (or was cut after a failure mid-stream, or the client went away).
   */
  async stream(p: PreparedSpeech, call: ApiCall, raw: ServerResponse): Promise<{ id: string }> {
    const id = newGenerationId();
    const started = this.now();
    const dropped: string[] = [];
    const base = { attempt: null, usage: null, cost: null, started, firstByteAt: null, upstreamId: null, native: null, cancelled: false };

    let committed = false;
    const commit = () => {
      if (committed) return;
      committed = true;
      raw.writeHead(200, { 'content-type': CONTENT_TYPES[p.format], 'cache-control': 'no-store', 'x-generation-id': id, 'x-request-id': call.requestId });
    };
    const write = async (b: Buffer) => {
      if (raw.destroyed || raw.write(b)) return;
      await drained(raw);
    };
    // The current attempt's first audio byte (the record of a stream cut after it keeps it).
    let firstByteAt: number | null = null;
    // Spend control (docs/spend.md): each attempt reserves its per-character (and per-request) cost.
    const hooks = this.deps.guardrails?.spendHooks<Attempt>(call.key, (a) => costAsk(speechCost(this.endpoint(a).pricing, p.characters, null), p.characters, 'this speech'));

    return runGeneration({
      ...planned(p.plan, call.cancel, { health: this.deps.health, now: () => this.now(), hooks }),
      errorHeaders: { 'x-generation-id': id },
      attempt: async (a) => {
        firstByteAt = null;
        const endpoint = this.endpoint(a);
        const adapter: SpeechAdapter = speechAdapter(endpoint.speech_protocol!);
        const options = optionsFor(p.body.provider?.options, a.provider.slug, endpoint.tag);
        const built = adapter.buildRequest(
          { input: p.body.input, voice: p.body.voice, format: p.format, speed: p.body.speed, options },
          { provider: a.provider, endpoint, apiKey: attemptKey(this.deps, a) },
        );
        dropped.splice(0, dropped.length, ...built.dropped);
        const res = await sendAttempt(this.deps.http, built.req, adapter.parseError, this.deps.catalog.timeouts(a.provider), call.cancel);
        try {
          const decoder = adapter.openStream(p.format, res.headers);
          const sent = await relayAudio(res, decoder, async (b) => {
            if (firstByteAt === null) firstByteAt = this.now();
            commit();
            await write(b);
          });
          if (sent === 0) throw new UpstreamError(502, 'Provider returned no audio', 'provider_unavailable', res.statusCode, null);
          return decoder;
        } finally {
          res.close();
        }
      },
      sample: (_d, t0) => ({ ttftMs: Math.round((firstByteAt ?? this.now()) - t0), tokensPerSecond: null }),
      served: (a, decoder, _i, attempts) => {
        const cost = speechCost(this.endpoint(a).pricing, p.characters, decoder.usage);
        this.record(p, call, id, { ...base, attempt: a, status: 200, error: null, usage: decoder.usage, cost, firstByteAt, upstreamId: decoder.upstreamId, native: decoder.native }, attempts);
        raw.end();
        return { result: { id }, cost, tokens: p.characters };
      },
      failed: (e, a, attempts) => {
        if (!committed) return undefined;
        // Too late to fall back: audio already went out. Cut the connection so the client sees an incomplete body.
        this.deps.log.warn({ generation: id, provider: a.provider.slug, err: e.message }, 'speech stream failed after the first byte');
        // The input's characters are billed whole once audio went out (the provider bills them), cut or not.
        const cost = speechCost(this.endpoint(a).pricing, p.characters, null);
        this.record(p, call, id, { ...base, attempt: a, status: e.status, error: { status: e.status, message: e.message }, cost, firstByteAt, cancelled: e.type === 'cancelled' }, attempts);
        raw.destroy();
        return { result: { id }, cost, tokens: p.characters };
      },
      // Every attempt failed before any audio (or the client went away, perhaps after some audio).
      recordUnserved: (u, attempts) =>
        this.record(p, call, id, { ...base, attempt: committed ? u.lastAttempt : null, status: u.status, error: { status: u.error.status, message: u.error.message }, cancelled: u.cancelled }, attempts),
      exhausted: (_error, cancelled) => {
        if (!committed && !cancelled) return undefined;
        if (!raw.destroyed) raw.destroy();
        return { result: { id } };
      },
      errorMetadata: (attempts, last) => (call.wantMetadata ? this.metadata(p, attempts, dropped, last) : undefined),
    });
  }
}

/** Decodes an upstream body and passes each non-empty piece of audio to `out`, in order; returns the bytes passed. */
async function relayAudio(res: UpstreamExchange, decoder: AudioDecoder, out: (b: Buffer) => Promise<void>): Promise<number> {
  let sent = 0;
  const relay = async (bufs: Buffer[]) => {
    for (const b of bufs) {
      if (b.length === 0) continue;
      sent += b.length;
      await out(b);
    }
  };
  for (let chunk = await res.read(); chunk !== null; chunk = await res.read()) await relay(decoder.push(chunk));
  await relay(decoder.end());
  return sent;
}
