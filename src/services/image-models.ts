/**
 * The image model listings (`GET /images/models`, `GET /images/models/{author}/{slug}/endpoints`; docs/images.md):
 * each image model with the union of its endpoints' supported parameters as typed descriptors, and each endpoint with
 * its own descriptors and its billable pricing lines. Built from the catalog only (no I/O).
 */
import type { EndpointDef, ImageProtocol, ModelDef, ProviderDef } from '../core/catalog-types.js';
import type { RouteCatalog } from '../core/routing.js';
import { imageProtocolOf } from './catalog.js';
import { BEDROCK_IMAGE_LIMITS, bedrockImageFamily, type BedrockImageFamily } from '../providers/registry.js';

export type Capability = { type: 'enum'; values: string[] } | { type: 'range'; min: number; max: number } | { type: 'boolean' };

const GEMINI_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];
const OPENAI_RATIOS = ['1:1', '3:2', '2:3'];

/** What each parameter accepts on an image API (an endpoint lists which of them it takes). */
const OPENAI_DESCRIPTORS: Record<string, Capability> = {
  n: { type: 'range', min: 1, max: 10 },
  size: { type: 'enum', values: ['auto', '1024x1024', '1536x1024', '1024x1536'] },
  aspect_ratio: { type: 'enum', values: OPENAI_RATIOS },
  quality: { type: 'enum', values: ['auto', 'low', 'medium', 'high'] },
  background: { type: 'enum', values: ['auto', 'transparent', 'opaque'] },
  output_format: { type: 'enum', values: ['png', 'jpeg', 'webp'] },
  output_compression: { type: 'range', min: 0, max: 100 },
  input_references: { type: 'range', min: 0, max: 16 },
};

/** Amazon Bedrock's image families (InvokeModel; providers/bedrock/image-sizes.ts): their own sizes, ratios and limits. */
const BEDROCK_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '9:16', '16:9'];
const BEDROCK_FAMILY_DESCRIPTORS: Record<BedrockImageFamily, Record<string, Capability>> = {
  'nova-canvas': {
    n: { type: 'range', min: 1, max: BEDROCK_IMAGE_LIMITS.maxImages['nova-canvas'] },
    size: { type: 'enum', values: ['1024x1024', '832x1248', '1248x832', '768x1360', '1360x768', '512x512'] },
    aspect_ratio: { type: 'enum', values: BEDROCK_RATIOS },
    seed: { type: 'range', min: 0, max: BEDROCK_IMAGE_LIMITS.maxSeed['nova-canvas'] },
  },
  'titan-image': {
    n: { type: 'range', min: 1, max: BEDROCK_IMAGE_LIMITS.maxImages['titan-image'] },
    size: { type: 'enum', values: BEDROCK_IMAGE_LIMITS.titanSizes },
    aspect_ratio: { type: 'enum', values: ['1:1', '2:3', '3:2', '3:5', '5:3', '7:9', '9:7', '9:5'] },
    seed: { type: 'range', min: 0, max: BEDROCK_IMAGE_LIMITS.maxSeed['titan-image'] },
  },
  stability: {
    aspect_ratio: { type: 'enum', values: BEDROCK_IMAGE_LIMITS.stabilityRatios },
    seed: { type: 'range', min: 0, max: BEDROCK_IMAGE_LIMITS.maxSeed.stability },
    output_format: { type: 'enum', values: ['png', 'jpeg', 'webp'] },
  },
};

const DESCRIPTORS: Record<Exclude<ImageProtocol, 'bedrock-image'>, Record<string, Capability>> = {
  'openai-images': OPENAI_DESCRIPTORS,
  // Azure takes no reference images on its JSON API (its edits are multipart): never listed for an Azure endpoint.
  'azure-openai-images': Object.fromEntries(Object.entries(OPENAI_DESCRIPTORS).filter(([k]) => k !== 'input_references')),
  'gemini-image': {
    aspect_ratio: { type: 'enum', values: GEMINI_RATIOS },
    seed: { type: 'boolean' },
    input_references: { type: 'range', min: 0, max: 16 },
  },
};

export function endpointCapabilities(e: EndpointDef, provider: ProviderDef | undefined): Record<string, Capability> {
  const protocol = imageProtocolOf(e, provider);
  const out: Record<string, Capability> = {};
  if (!protocol) return out;
  const family = protocol === 'bedrock-image' ? bedrockImageFamily(e.upstreamModel) : null;
  const table = protocol === 'bedrock-image' ? (family ? BEDROCK_FAMILY_DESCRIPTORS[family] : {}) : DESCRIPTORS[protocol];
  for (const p of e.supported_parameters) {
    const d = table[p];
    if (d) out[p] = d;
  }
  return out;
}

/** Two descriptors of one parameter merged (enum values united, ranges widened). */
function merge(a: Capability | undefined, b: Capability): Capability {
  if (!a || a.type !== b.type) return a ?? b;
  if (a.type === 'enum' && b.type === 'enum') return { type: 'enum', values: [...new Set([...a.values, ...b.values])] };
  if (a.type === 'range' && b.type === 'range') return { type: 'range', min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) };
  return a;
}

export interface ImagePricingLine {
  billable: 'output_image' | 'input_text';
  unit: 'image' | 'token';
  cost_usd: number;
}

/** The billable lines of an endpoint's pricing: per image, and per token (input text, output image). */
export function pricingLines(e: EndpointDef): ImagePricingLine[] {
  const p = e.pricing;
  if (!p) return [];
  const out: ImagePricingLine[] = [];
  if (p.image_output !== undefined) out.push({ billable: 'output_image', unit: 'image', cost_usd: Number(p.image_output) });
  if (Number(p.prompt) > 0) out.push({ billable: 'input_text', unit: 'token', cost_usd: Number(p.prompt) });
  if (Number(p.completion) > 0) out.push({ billable: 'output_image', unit: 'token', cost_usd: Number(p.completion) });
  return out;
}

const endpointsUrl = (id: string) => `/api/v1/images/models/${id}/endpoints`;

function listItem(m: ModelDef, endpoints: readonly EndpointDef[], providers: ReadonlyMap<string, ProviderDef>) {
  const params: Record<string, Capability> = {};
  for (const e of endpoints) for (const [k, d] of Object.entries(endpointCapabilities(e, providers.get(e.provider)))) params[k] = merge(params[k], d);
  return {
    id: m.id,
    name: m.name,
    description: m.description,
    created: m.created,
    architecture: { input_modalities: m.architecture.input_modalities, output_modalities: m.architecture.output_modalities },
    supported_parameters: params,
    supports_streaming: false,
    endpoints: endpointsUrl(m.id),
  };
}

/** Every image model that has an image endpoint. */
export function imageModels(route: RouteCatalog) {
  const out = [];
  for (const [id, endpoints] of route.endpointsByModel) {
    const m = route.models.get(id);
    if (m && endpoints.length > 0) out.push(listItem(m, endpoints, route.providers));
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/** An image model's endpoints (null: no such image model). */
export function imageModelEndpoints(route: RouteCatalog, id: string) {
  const endpoints = route.endpointsByModel.get(id);
  if (!endpoints || endpoints.length === 0) return null;
  return {
    id,
    endpoints: endpoints.map((e) => {
      const p = route.providers.get(e.provider);
      return {
        provider_name: p?.name ?? e.provider,
        provider_slug: e.provider,
        provider_tag: e.tag,
        supported_parameters: endpointCapabilities(e, p),
        allowed_passthrough_parameters: [] as string[],
        supports_streaming: false,
        pricing: pricingLines(e),
      };
    }),
  };
}
