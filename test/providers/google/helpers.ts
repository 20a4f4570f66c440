/** Shared helpers of the Gemini adapter tests. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EndpointDef, ProviderDef } from '../../../src/core/catalog-types.js';
import type { IrRequest } from '../../../src/core/ir.js';
import type { UpstreamContext } from '../../../src/core/adapters.js';

const DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));

export const fixture = (name: string): string => readFileSync(DIR + name, 'utf8');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const fixtureJson = (name: string): any => JSON.parse(fixture(name));

export function provider(extra: Partial<ProviderDef> = {}): ProviderDef {
  return {
    slug: 'google',
    name: 'Google AI Studio',
    protocol: 'google',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    ...extra,
  };
}

export function endpoint(upstreamModel = 'gemini-2.5-flash'): EndpointDef {
  return {
    model: 'google/gemini-2.5-flash',
    provider: 'google',
    tag: 'google',
    upstreamModel,
    pricing: null,
    context_length: 1048576,
    max_prompt_tokens: null,
    max_completion_tokens: 65536,
    quantization: 'unknown',
    supported_parameters: [],
    is_moderated: false,
    supports_implicit_caching: true,
  };
}

export function context(extra: Partial<UpstreamContext> = {}): UpstreamContext {
  return { provider: provider(), endpoint: endpoint(), apiKey: 'test-key', ...extra };
}

export function irRequest(extra: Partial<IrRequest> = {}): IrRequest {
  return {
    model: 'gemini-2.5-flash',
    system: [],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    stream: false,
    ...extra,
  };
}

/** Splits a text at random boundaries (seeded, reproducible). */
export function randomChunks(text: string, seed: number, maxSize = 40): string[] {
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = 1 + Math.floor(rnd() * maxSize);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}
