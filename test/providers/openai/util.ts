/** Helpers shared by the OpenAI chat and Responses adapter tests. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IrPart, IrStreamEvent } from '../../../src/core/ir.js';
import type { EndpointDef, ProviderDef } from '../../../src/core/catalog-types.js';
import type { StreamDecoder, UpstreamContext } from '../../../src/core/adapters.js';

export const fixture = (dir: string, name: string): string => readFileSync(new URL(`../${dir}/fixtures/${name}`, import.meta.url), 'utf8');

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits a text into pieces of the given size, or of random sizes (1 … max) when size is 'random'. */
export function pieces(text: string, size: number | { random: number; max: number }): string[] {
  const out: string[] = [];
  const r = typeof size === 'number' ? null : rng(size.random);
  for (let i = 0; i < text.length; ) {
    const n = r ? 1 + Math.floor(r() * (size as { max: number }).max) : (size as number);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** Every chunking to try: 1, 2, 3, 5, 7, 13, 64 bytes, ten random splits and the whole text. */
export function chunkings(text: string): Array<{ name: string; parts: string[] }> {
  const out = [1, 2, 3, 5, 7, 13, 64].map((n) => ({ name: `size ${n}`, parts: pieces(text, n) }));
  for (let s = 1; s <= 10; s++) out.push({ name: `random #${s}`, parts: pieces(text, { random: s * 7919, max: 40 }) });
  out.push({ name: 'whole', parts: [text] });
  return out;
}

/** Feeds a decoder piece by piece and ends it. */
export function decode(d: StreamDecoder, parts: string[]): IrStreamEvent[] {
  const out: IrStreamEvent[] = [];
  for (const p of parts) out.push(...d.push(p));
  out.push(...d.end());
  return out;
}

/** Reassembles stream events into output parts (in part-index order), as a consumer would. */
export function assemble(events: IrStreamEvent[]): IrPart[] {
  const parts = new Map<number, IrPart>();
  for (const ev of events) {
    switch (ev.type) {
      case 'text_delta': {
        const p = parts.get(ev.index) ?? { type: 'text', text: '' };
        (p as { text: string }).text += ev.text;
        parts.set(ev.index, p);
        break;
      }
      case 'reasoning_delta': {
        const p = parts.get(ev.index) ?? { type: 'reasoning', text: '' };
        (p as { text: string }).text += ev.text;
        parts.set(ev.index, p);
        break;
      }
      case 'reasoning_signature': {
        const p = parts.get(ev.index) ?? { type: 'reasoning', text: '' };
        (p as { signature?: string }).signature = ev.signature;
        parts.set(ev.index, p);
        break;
      }
      case 'redacted_reasoning':
        parts.set(ev.index, { type: 'redacted_reasoning', data: ev.data });
        break;
      case 'refusal_delta': {
        const p = parts.get(ev.index) ?? { type: 'refusal', text: '' };
        (p as { text: string }).text += ev.text;
        parts.set(ev.index, p);
        break;
      }
      case 'tool_call_start':
        parts.set(ev.index, { type: 'tool_call', id: ev.id, name: ev.name, arguments: '' });
        break;
      case 'tool_call_delta': {
        const p = parts.get(ev.index);
        if (!p || p.type !== 'tool_call') throw new Error(`tool_call_delta before tool_call_start (index ${ev.index})`);
        p.arguments += ev.arguments;
        break;
      }
      default:
        break;
    }
  }
  return [...parts.entries()].sort((a, b) => a[0] - b[0]).map(([, p]) => p);
}

export const provider = (over: Partial<ProviderDef> = {}): ProviderDef => ({
  slug: 'openai',
  name: 'OpenAI',
  protocol: 'openai',
  baseUrl: 'https://api.openai.example/v1',
  dataPolicy: { training: false, retainsPrompts: true, zdr: false },
  ...over,
});

export const endpoint = (over: Partial<EndpointDef> = {}): EndpointDef => ({
  model: 'openai/gpt-4.1',
  provider: 'openai',
  tag: 'openai',
  upstreamModel: 'gpt-4.1',
  pricing: { prompt: '0.000002', completion: '0.000008' },
  context_length: 1_000_000,
  max_prompt_tokens: null,
  max_completion_tokens: 32768,
  quantization: 'unknown',
  supported_parameters: ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'tools', 'tool_choice', 'response_format', 'reasoning'],
  is_moderated: false,
  supports_implicit_caching: true,
  ...over,
});

export const ctx = (p: Partial<ProviderDef> = {}, e: Partial<EndpointDef> = {}, apiKey: string | null = 'sk-test'): UpstreamContext => ({
  provider: provider(p),
  endpoint: endpoint(e),
  apiKey,
});

/** A local HTTP server answering every request with the given body (SSE or JSON). */
export async function serveOnce(
  handler: (body: string) => { status?: number; contentType: string; body: string },
): Promise<{ url: string; close: () => Promise<void>; requests: string[] }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      requests.push(body);
      const r = handler(body);
      res.writeHead(r.status ?? 200, { 'content-type': r.contentType });
      res.end(r.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
