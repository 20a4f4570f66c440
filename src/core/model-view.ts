/**
 * The API views of the catalog: a model with its pricing and capabilities derived from the endpoints that serve it,
 * list filtering and sorting for GET /models. Pure functions.
 */
import type { EndpointDef, ModelDef, Pricing } from './catalog-types.js';
import { blendedTokenPrice, pricePerMillion } from './pricing.js';

const ZERO_PRICING = { prompt: '0', completion: '0', request: '0', image: '0' };

/** The endpoint whose terms represent the model: the cheapest priced one, else the first. */
export function topEndpoint(endpoints: EndpointDef[]): EndpointDef | undefined {
  let best: EndpointDef | undefined;
  let bestPrice = Infinity;
  for (const e of endpoints) {
    const p = blendedTokenPrice(e.pricing);
    if (p !== null && p < bestPrice) {
      best = e;
      bestPrice = p;
    }
  }
  return best ?? endpoints[0];
}

/** The hosted API's mark of a price that is not fixed (its auto router's), used for a price the gateway does not know. */
const UNKNOWN_PRICING = { prompt: '-1', completion: '-1' } as const;

function pricingView(p: Pricing | null | undefined): Record<string, string> {
  if (!p) return { ...UNKNOWN_PRICING };
  const out: Record<string, string> = { ...ZERO_PRICING };
  for (const [k, v] of Object.entries(p)) if (typeof v === 'string') out[k] = v;
  if (typeof p.discount === 'number') out.discount = String(p.discount);
  return out;
}

/** The fields every model listing starts with (GET /models, /videos/models): who the model is, in this order. */
export function modelIdentity(m: ModelDef) {
  return {
    id: m.id,
    canonical_slug: m.canonical_slug,
    hugging_face_id: m.hugging_face_id,
    name: m.name,
    created: m.created,
    description: m.description,
  };
}

export function modelView(m: ModelDef, endpoints: EndpointDef[], opts: { withReasoning?: boolean } = {}) {
  const top = topEndpoint(endpoints);
  const params = new Set<string>();
  for (const e of endpoints) for (const p of e.supported_parameters) params.add(p);
  const view: Record<string, unknown> = {
    ...modelIdentity(m),
    context_length: Math.max(0, ...endpoints.map((e) => e.context_length)) || m.context_length,
    architecture: m.architecture,
    // "-1" prices when no endpoint has a known price (flagged as the hosted API does, never shown as free).
    pricing: pricingView(top?.pricing),
    top_provider: top
      ? { context_length: top.context_length, max_completion_tokens: top.max_completion_tokens, is_moderated: top.is_moderated }
      : { context_length: m.context_length, max_completion_tokens: null, is_moderated: false },
    per_request_limits: null,
    supported_parameters: [...params].sort(),
    supported_voices: m.supported_voices,
    default_parameters: m.default_parameters,
    knowledge_cutoff: m.knowledge_cutoff,
    expiration_date: m.expiration_date,
    links: { details: `/api/v1/models/${m.id}/endpoints` },
  };
  if (opts.withReasoning) {
    view.reasoning = m.reasoning ?? { default_effort: null, default_enabled: false, mandatory: false, supported_efforts: [] };
  }
  return view;
}

export interface ModelQuery {
  q?: string;
  output_modalities?: string;
  input_modalities?: string;
  supported_parameters?: string;
  context?: number;
  min_price?: number;
  max_price?: number;
  min_output_price?: number;
  max_output_price?: number;
  providers?: string;
  model_authors?: string;
  sort?: string;
}

export const MODEL_SORTS = ['newest', 'pricing-low-to-high', 'pricing-high-to-low', 'context-high-to-low', 'throughput-high-to-low', 'latency-low-to-high'] as const;

const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);

function perMillion(v: string | undefined): number | null {
  return v === undefined ? null : pricePerMillion(v);
}

/**
 * Filters and sorts models. `stats(model)` gives the best measured throughput (tok/s) and latency (ms) across the
 * model's endpoints, for the throughput and latency sorts.
 */
export function queryModels(
  models: Array<{ model: ModelDef; endpoints: EndpointDef[] }>,
  q: ModelQuery,
  stats: (model: string) => { throughput: number | null; latency: number | null } = () => ({ throughput: null, latency: null }),
) {
  const out = list(q.output_modalities ?? 'text');
  const inp = list(q.input_modalities);
  const params = list(q.supported_parameters);
  const providers = list(q.providers);
  const authors = list(q.model_authors);
  const text = q.q?.trim().toLowerCase();
  const filtered = models.filter(({ model, endpoints }) => {
    if (!out.includes('all') && !out.every((m) => model.architecture.output_modalities.includes(m))) return false;
    if (inp.length > 0 && !inp.every((m) => model.architecture.input_modalities.includes(m))) return false;
    if (params.length > 0) {
      const supported = new Set(endpoints.flatMap((e) => e.supported_parameters));
      if (!params.every((p) => supported.has(p))) return false;
    }
    if (providers.length > 0 && !endpoints.some((e) => providers.includes(e.provider))) return false;
    if (authors.length > 0 && !authors.includes(model.id.split('/')[0])) return false;
    if (text && !`${model.id} ${model.name} ${model.description}`.toLowerCase().includes(text)) return false;
    const ctx = Math.max(model.context_length, ...endpoints.map((e) => e.context_length));
    if (q.context !== undefined && ctx < q.context) return false;
    const top = topEndpoint(endpoints);
    const prompt = perMillion(top?.pricing?.prompt);
    const completion = perMillion(top?.pricing?.completion);
    if (q.min_price !== undefined && (prompt === null || prompt < q.min_price)) return false;
    if (q.max_price !== undefined && (prompt === null || prompt > q.max_price)) return false;
    if (q.min_output_price !== undefined && (completion === null || completion < q.min_output_price)) return false;
    if (q.max_output_price !== undefined && (completion === null || completion > q.max_output_price)) return false;
    return true;
  });
  const price = (x: { endpoints: EndpointDef[] }) => blendedTokenPrice(topEndpoint(x.endpoints)?.pricing) ?? Infinity;
  const ctxOf = (x: { model: ModelDef; endpoints: EndpointDef[] }) => Math.max(x.model.context_length, ...x.endpoints.map((e) => e.context_length));
  const nullsLast = (v: number | null, desc: boolean) => (v === null ? Infinity : desc ? -v : v);
  switch (q.sort) {
    case 'pricing-low-to-high':
      filtered.sort((a, b) => price(a) - price(b));
      break;
    case 'pricing-high-to-low':
      filtered.sort((a, b) => (price(b) === Infinity ? -1 : price(a) === Infinity ? 1 : price(b) - price(a)));
      break;
    case 'context-high-to-low':
      filtered.sort((a, b) => ctxOf(b) - ctxOf(a));
      break;
    case 'throughput-high-to-low':
      filtered.sort((a, b) => nullsLast(stats(a.model.id).throughput, true) - nullsLast(stats(b.model.id).throughput, true));
      break;
    case 'latency-low-to-high':
      filtered.sort((a, b) => nullsLast(stats(a.model.id).latency, false) - nullsLast(stats(b.model.id).latency, false));
      break;
    default:
      // newest (the default): most recently created first, then by id for a stable order.
      filtered.sort((a, b) => b.model.created - a.model.created || a.model.id.localeCompare(b.model.id));
  }
  return filtered;
}
