/** Shared fixtures and builders for the Anthropic adapter tests. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EndpointDef, ProviderDef } from '../../../src/core/catalog-types.js';
import type { IrRequest, IrStreamEvent } from '../../../src/core/ir.js';
import type { StreamDecoder, UpstreamContext } from '../../../src/core/adapters.js';
import { anthropicAdapter } from '../../../src/providers/anthropic/index.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A fixture file's text (see fixtures/SOURCES.md for where each one comes from). */
export const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

export function provider(extra: Partial<ProviderDef> = {}): ProviderDef {
  return {
    slug: 'anthropic',
    name: 'Anthropic',
    protocol: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    ...extra,
  };
}

export function endpoint(extra: Partial<EndpointDef> = {}): EndpointDef {
  return {
    model: 'anthropic/claude-sonnet-4.5',
    provider: 'anthropic',
    tag: 'anthropic',
    upstreamModel: 'claude-sonnet-4-5',
    pricing: null,
    context_length: 200000,
    max_prompt_tokens: null,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: ['temperature', 'top_p', 'top_k', 'stop', 'tools', 'tool_choice', 'reasoning', 'max_tokens'],
    is_moderated: false,
    supports_implicit_caching: false,
    ...extra,
  };
}

export function ctx(extra: { provider?: Partial<ProviderDef>; endpoint?: Partial<EndpointDef>; apiKey?: string | null } = {}): UpstreamContext {
  return { provider: provider(extra.provider), endpoint: endpoint(extra.endpoint), apiKey: extra.apiKey === undefined ? 'sk-ant-test' : extra.apiKey };
}

export function irRequest(extra: Partial<IrRequest> = {}): IrRequest {
  return { model: 'claude-sonnet-4-5', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }], stream: false, ...extra };
}

/** The JSON body buildRequest produces. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function body(req: Partial<IrRequest> = {}, c: UpstreamContext = ctx()): any {
  return JSON.parse(anthropicAdapter.buildRequest(irRequest(req), c).body);
}

/** Feeds `text` to a fresh decoder in pieces of `size` characters (Infinity = whole), then ends it. */
export function decode(text: string, size = Infinity, decoder: StreamDecoder = anthropicAdapter.createStreamDecoder()): IrStreamEvent[] {
  const out: IrStreamEvent[] = [];
  const step = size === Infinity ? Math.max(1, text.length) : size;
  for (let i = 0; i < text.length; i += step) out.push(...decoder.push(text.slice(i, i + step)));
  out.push(...decoder.end());
  return out;
}

/** Feeds `text` in pseudo-random pieces (1..max characters, deterministic per seed). */
export function decodeRandom(text: string, seed: number, max = 40): IrStreamEvent[] {
  const decoder = anthropicAdapter.createStreamDecoder();
  const out: IrStreamEvent[] = [];
  let s = seed >>> 0;
  let i = 0;
  while (i < text.length) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const n = 1 + (s % max);
    out.push(...decoder.push(text.slice(i, i + n)));
    i += n;
  }
  out.push(...decoder.end());
  return out;
}
