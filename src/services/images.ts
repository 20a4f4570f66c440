/**
 * Image generation (`POST /images`, docs/images.md): policy and limits, routing over the image endpoints, attempts with
 * fallbacks through the one attempt runner, cost, the reservation and the generation record. The route validates.
 *
 * Decisions:
 * - Routing reuses `planRequest` over `catalog.imageRoute` with the API's own filter: `n` above 1 needs an endpoint
 *   listing `n`; reference images need one listing `input_references` whose API takes them (Gemini: data URLs only).
 *   Other parameters an endpoint does not list are dropped (named in gateway_metadata), as on the other APIs.
 * - Price: `pricing.image_output` × images returned, plus the tokens the provider reports at the token prices, plus
 *   `pricing.request`; exact decimal arithmetic (core/pricing.ts). For ranking, a per-image price counts as a
 *   request price; `provider.max_price.image` bounds it.
 * - Reservation (docs/spend.md): the maximum cost at the plan's first priced endpoint — `image_output` × n, plus
 *   `IMAGE_TOKENS_MAX` output tokens per image and the prompt's estimated tokens at the token prices — is held in
 *   every limit before any upstream call (402 when one has no room) and settled at the real cost.
 * - Record: `api_type: "image"`, the provider's tokens (prompt, completion).
 */
import { costAsk, type SpendAsk } from '../core/spend-ask.js';
import { computeCost, formatPrice, type CostResult } from '../core/pricing.js';
import type { EndpointDef, Pricing } from '../core/catalog-types.js';
import type { ProviderPreferences } from '../core/provider-prefs.js';
import type { Attempt, RouteCatalog, RoutePlan } from '../core/routing.js';
import { pricedRoute, type PricedRoute } from '../core/priced-route.js';
import { formatNano, usdToNano } from '../core/money.js';
import { imageAdapter, type ImageAnswer, type ImageReference } from '../providers/registry.js';
import type { ApiCall, ApiServiceDeps } from './api-deps.js';
import { imageProtocolOf } from './catalog.js';
import { planRequest, runSingleAnswer } from './single-answer.js';
import { attemptKey } from './byok.js';
import { answerRecord } from './generations.js';
import { newGenerationId } from './generation-id.js';
import { badRequest, HttpError } from '../core/errors.js';
import { optionsFor } from './speech.js';
import type { JsonReply } from './attempts/cache-step.js';
import type { UpstreamExchange } from '../providers/http.js';
import { readImageStream, type ImageStreamSink } from './images-stream.js';

/** Output tokens reserved per image on a token-priced endpoint (gpt-image-1's largest: high quality, 1536×1024). */
export const IMAGE_TOKENS_MAX = 6240;
/** Output tokens OpenAI bills per partial image ("each partial image will incur an additional 100 image output tokens"). */
export const PARTIAL_IMAGE_TOKENS = 100;

/** The images request body (schema-validated by the route). */
export interface ImagesBody {
  model: string;
  prompt: string;
  n?: number;
  size?: string;
  aspect_ratio?: string;
  resolution?: string;
  quality?: string;
  background?: string;
  output_format?: string;
  output_compression?: number;
  seed?: number;
  stream?: boolean;
  /** OpenAI's field (the openai SDK's): with `stream`, partial images an upstream that streams natively sends (0–3). */
  partial_images?: number;
  input_references?: Array<{ type: 'image_url'; image_url: { url: string; detail?: string } }>;
  provider?: (ProviderPreferences & { options?: Record<string, Record<string, unknown> | null> }) | null;
}

export interface PreparedImages {
  body: ImagesBody;
  n: number;
  references: ImageReference[];
  plan: RoutePlan;
}

/** Cost of one answer: images at `image_output` (the per-unit slot), reported tokens at the token prices, `request`. */
export function imageCost(pricing: Pricing | null, images: number, usage: { promptTokens: number; completionTokens: number } | null): CostResult {
  const p: Pricing | null = pricing ? { ...pricing, image: pricing.image_output ?? '0' } : null;
  return computeCost(p, usage ?? { promptTokens: 0, completionTokens: 0 }, { images: pricing?.image_output !== undefined ? images : 0 });
}

const PIXELS = /^(\d{2,5})x(\d{2,5})$/;

/** The routing preferences of `provider` (its `options` are the providers' own; see optionsFor). */
function routingPrefs(provider: ImagesBody['provider']): ProviderPreferences {
  const prefs: ProviderPreferences & { options?: unknown } = { ...(provider ?? {}) };
  delete prefs.options;
  return prefs;
}

/** 400 for a size that contradicts the aspect ratio or resolution given beside it (the reference's rule), or a transparent background in a format without alpha. */
function checkSize(body: ImagesBody): void {
  if (body.background === 'transparent' && (body.output_format === 'jpeg' || body.output_format === 'svg')) {
    throw badRequest(`background "transparent" needs an output_format with alpha (png or webp), not ${body.output_format}`, { field: 'background', error_type: 'invalid_request' });
  }
  const px = body.size ? PIXELS.exec(body.size) : null;
  if (!px) return;
  const [w, h] = [Number(px[1]), Number(px[2])];
  if (body.aspect_ratio && body.aspect_ratio !== 'auto') {
    const [a, b] = body.aspect_ratio.split(':').map(Number);
    if (Math.abs(w / h - a / b) > 0.02) throw badRequest(`aspect_ratio ${body.aspect_ratio} does not match size ${body.size}`, { field: 'aspect_ratio', error_type: 'invalid_request' });
  }
  if (body.resolution) throw badRequest(`resolution cannot be combined with an explicit pixel size (${body.size})`, { field: 'resolution', error_type: 'invalid_request' });
}

/** The maximum cost of a request at the plan's first priced endpoint, with the 402 message it would give. */
/**
 * What one attempt reserves (docs/spend.md): n images at the endpoint's per-image price, or — priced per token — the
 * prompt (a byte bound) and at most IMAGE_TOKENS_MAX output tokens per image; settled to the real cost afterwards.
 */
export function imagesAsk(a: { endpoint: EndpointDef; model: string }, prompt: string, n: number, partials = 0): SpendAsk | null {
  const pricing = a.endpoint.pricing;
  if (!pricing) return null;
  const promptTokens = Buffer.byteLength(prompt, 'utf8') + 8;
  const completionTokens = pricing.image_output !== undefined ? 0 : n * (IMAGE_TOKENS_MAX + PARTIAL_IMAGE_TOKENS * partials);
  const c = imageCost(pricing, n, { promptTokens, completionTokens });
  return costAsk(c.cost, promptTokens + completionTokens, `${n} image${n === 1 ? '' : 's'} of ${a.model}`);
}

export class ImagesService {
  private readonly route: RouteCatalog;
  private readonly original: PricedRoute['original'];

  constructor(private readonly deps: ApiServiceDeps) {
    // For ranking and max_price, a per-image price counts as a request price, and is what `max_price.image` bounds
    // (the input-image price of chat means nothing here).
    const priced = pricedRoute(deps.catalog.imageRoute, (p) =>
      p.image_output ? { ...p, request: formatPrice(Number(p.request ?? 0) + Number(p.image_output)), image: p.image_output } : null,
    );
    this.route = priced.route;
    this.original = priced.original;
  }

  /** The image endpoints as the catalog has them (for the listings). */
  get catalogRoute(): RouteCatalog {
    return this.deps.catalog.imageRoute;
  }

  private endpoint(a: Attempt): EndpointDef {
    return this.original(a.endpoint);
  }

  /** Policy, limits, the route and the reservation. Throws HttpError (4xx) when the request cannot be served. */
  async prepare(body: ImagesBody, call: ApiCall): Promise<PreparedImages> {
    const model = body.model;
    if (this.route.models.has(model) && (this.route.endpointsByModel.get(model) ?? []).length === 0) {
      throw badRequest(`${model} is not an image generation model: it has no image endpoint`, { field: 'model', error_type: 'invalid_request' });
    }
    checkSize(body);
    const n = body.n ?? 1;
    const references = (body.input_references ?? []).map((r) => ({ url: r.image_url.url }));
    const params = (['size', 'aspect_ratio', 'quality', 'background', 'output_format', 'output_compression', 'seed'] as const).filter((k) => body[k] !== undefined) as string[];
    if (n > 1) params.push('n');
    if (body.stream === true && (body.partial_images ?? 0) > 0) params.push('partial_images');
    if (references.length > 0) params.push('input_references');
    const { plan } = await this.plan(body, call, n, references, params);
    return { body, n, references, plan };
  }

  /** The route and the reservation; a 402 refusal is recorded (status 402, no attempt, no cost) for the request log. */
  private async plan(body: ImagesBody, call: ApiCall, n: number, references: ImageReference[], params: string[]) {
    const model = body.model;
    try {
      return await this.planRoute(body, call, n, references, params);
    } catch (err) {
      if (err instanceof HttpError && err.status === 402) {
        const now = this.deps.now ? this.deps.now() : Date.now();
        const error = { status: 402, message: err.message };
        this.deps.recorder.record(answerRecord({ id: newGenerationId(), requestId: call.requestId, key: call.key, apiType: 'image', requestedModel: model, promptTokens: 0, completionTokens: 0, cost: null, upstreamId: null, started: now, end: now, attempts: [], attempt: null, status: 402, error, cancelled: false }));
      }
      throw err;
    }
  }

  private planRoute(body: ImagesBody, call: ApiCall, n: number, references: ImageReference[], params: string[]) {
    const model = body.model;
    // The first value an endpoint's model family cannot take (a size, an aspect ratio, n, a seed): named in the 400
    // when no endpoint is left.
    let problem: { field: string; message: string } | null = null;
    const ask = { n, size: body.size ?? body.resolution, aspect_ratio: body.aspect_ratio, seed: body.seed, output_format: body.output_format };
    return planRequest(this.deps, {
      key: call.key,
      route: this.route,
      model,
      endpointFilter: (ep, provider) => {
        const protocol = imageProtocolOf(this.original(ep), provider);
        if (!protocol) return 'unsupported_parameter';
        if (n > 1 && !ep.supported_parameters.includes('n')) return 'unsupported_parameter';
        if (references.length > 0 && (!ep.supported_parameters.includes('input_references') || !imageAdapter(protocol).acceptsReferences(references))) return 'unsupported_parameter';
        const p = imageAdapter(protocol).problem?.(ask, this.original(ep)) ?? null;
        if (p) {
          problem ??= p;
          return 'unsupported_parameter';
        }
        return undefined;
      },
      params,
      provider: routingPrefs(body.provider),
      adjust: (p) => {
        if (p.error?.code === 'constraint_filtered' && p.error.excluded_by?.includes('unsupported_parameter')) {
          if (problem) throw badRequest(problem.message, { field: problem.field, error_type: 'invalid_request' });
          p.error.message = `No endpoint of ${model} can serve this request${n > 1 ? ` (n = ${n}: providers that generate one image per call reject n > 1)` : ''}${references.length > 0 ? ' (with these input_references)' : ''}`;
        }
      },
    });
  }

  /**
   * The images of a prepared request. With `sink` (a streamed request), an endpoint that streams natively (its adapter
   * has a stream decoder and it lists `partial_images`) is asked with `stream: true` when one image is asked for (a
   * partial image event does not say which of several images it belongs to), and its partial images are relayed.
   */
  async generate(p: PreparedImages, call: ApiCall, sink?: ImageStreamSink): Promise<JsonReply> {
    const b = p.body;
    const partials = b.stream === true ? (b.partial_images ?? 0) : 0;
    return runSingleAnswer<ImageAnswer>({
      deps: this.deps,
      apiType: 'image',
      requested: b.model,
      call,
      prepared: p,
      // Reserved per attempt at that endpoint's prices (docs/spend.md).
      ask: (a) => imagesAsk(a, b.prompt, p.n, partials),
      stopAfterFailure: () => sink?.sent === true,
      // Logged (when the workspace logs content) without the reference images' bytes.
      input: { api: 'other', body: { ...b, ...(b.input_references ? { input_references: b.input_references.length } : {}) } as unknown as Record<string, unknown> },
      request: (a, id) => {
        const endpoint = this.endpoint(a);
        const adapter = imageAdapter(imageProtocolOf(endpoint, a.provider)!);
        const size = b.size ?? b.resolution;
        const native = sink && adapter.streamDecoder && endpoint.supported_parameters.includes('partial_images') && p.n === 1 ? adapter.streamDecoder : null;
        const ctx = { provider: a.provider, endpoint, apiKey: attemptKey(this.deps, a) };
        const built = adapter.buildRequest(
          {
            prompt: b.prompt,
            n: p.n,
            size,
            aspect_ratio: b.aspect_ratio,
            quality: b.quality,
            background: b.background,
            output_format: b.output_format,
            output_compression: b.output_compression,
            seed: b.seed,
            references: p.references,
            options: optionsFor(b.provider?.options, a.provider.slug, endpoint.tag),
            ...(native ? { stream: { partialImages: partials } } : {}),
          },
          ctx,
        );
        const dropped = b.partial_images !== undefined && !native ? [...built.dropped, 'partial_images'] : built.dropped;
        const read = native && sink ? (res: UpstreamExchange) => readImageStream(res, native(), (x) => sink.partial(id, x)) : undefined;
        const authorize = adapter.authorize ? (req: { url: URL; headers: Record<string, string>; body: string }) => adapter.authorize!(req, ctx) : undefined;
        return { ...built.req, dropped, parseError: adapter.parseError, parse: (text: string) => adapter.parse(text), ...(read ? { read } : {}), ...(authorize ? { authorize } : {}) };
      },
      served: (id, a, answer) => {
        // A provider may return more than asked: the client gets (and pays for) at most n.
        const images = answer.images.slice(0, p.n);
        const usage = answer.usage;
        const cost = imageCost(this.endpoint(a).pricing, images.length, usage);
        const promptTokens = usage?.promptTokens ?? 0;
        const completionTokens = usage?.completionTokens ?? 0;
        const body: Record<string, unknown> = {
          id,
          created: Math.floor((this.deps.now ? this.deps.now() : Date.now()) / 1000),
          model: a.model,
          provider: a.provider.name,
          data: images.map((img) => ({ b64_json: img.b64, ...(img.mediaType ? { media_type: img.mediaType } : {}) })),
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
            completion_tokens_details: { image_tokens: completionTokens },
            cost: cost.cost,
            is_byok: a.byok !== undefined,
          },
        };
        return { body, promptTokens, completionTokens, cost: cost.cost, upstreamId: answer.upstreamId };
      },
    });
  }
}
