/**
 * Helpers of the inbound-adapter tests: fixtures, a sample AnswerMeta, running an encoder over IR events, parsing SSE,
 * and a tiny node:http server that serves canned bodies to the official SDKs.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IrStreamEvent, IrUsage } from '../../src/core/ir.js';
import type { AnswerMeta, StreamEncoder } from '../../src/core/adapters.js';

export type Json = Record<string, any>;

export function fixture(dir: 'anthropic' | 'openai-responses', name: string): Json {
  return JSON.parse(readFileSync(new URL(`./fixtures/${dir}/${name}.json`, import.meta.url), 'utf8')) as Json;
}

export function meta(over: Partial<AnswerMeta> = {}): AnswerMeta {
  return {
    id: 'gen-1700000000-AbCdEf0123456789',
    model: 'anthropic/claude-sonnet-4',
    provider: 'Anthropic',
    created: 1_700_000_000,
    cost: 0.00123,
    cost_details: { upstream_inference_prompt_cost: 0.001, upstream_inference_completions_cost: 0.00023, upstream_inference_cost: null },
    ...over,
  };
}

export const usage = (u: Partial<IrUsage> = {}): IrUsage => ({ input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0, ...u });

/** How an encoded stream ends: successfully (with final usage) or with an error after it started. */
export type StreamEnd = { usage: IrUsage | null } | { error: { status: number; message: string; type: string } };

/** Encodes a whole IR stream into the SSE text a client would receive, one string per write. */
export function encode(enc: StreamEncoder, events: IrStreamEvent[], end: StreamEnd, m: AnswerMeta): string[] {
  const out = [enc.start()];
  for (const ev of events) out.push(enc.event(ev));
  out.push('error' in end ? enc.error(end.error.status, end.error.message, end.error.type, m) : enc.finish(end.usage, m));
  return out.filter((s) => s !== '');
}

export interface SseFrame {
  event: string | null;
  data: string;
}

/** Minimal SSE parser (frames separated by a blank line; `event:` and `data:` lines). */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    frames.push({ event, data: data.join('\n') });
  }
  return frames;
}

/** The JSON events of an SSE text (skipping `[DONE]`), checking that each `event:` line names the data's `type`. */
export function sseEvents(text: string): Json[] {
  return parseSse(text)
    .filter((f) => f.data !== '[DONE]')
    .map((f) => {
      const data = JSON.parse(f.data) as Json;
      if (f.event !== data.type) throw new Error(`event line ${f.event} does not match data.type ${data.type}`);
      return data;
    });
}

export interface Canned {
  status?: number;
  headers?: Record<string, string>;
  /** JSON body, or SSE pieces written one by one. */
  json?: unknown;
  sse?: string[];
}

export interface TestServer {
  url: string;
  /** Request bodies received, in order. */
  requests: Array<{ path: string; body: Json }>;
  /** What the next requests get. */
  reply: Canned;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts a local server that answers every request with `server.reply` (SSE pieces are written with small pauses). */
export async function startServer(): Promise<TestServer> {
  const state: TestServer = { url: '', requests: [], reply: { json: {} }, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      state.requests.push({ path: req.url ?? '', body: text ? (JSON.parse(text) as Json) : {} });
      const r = state.reply;
      if (r.sse) {
        res.writeHead(r.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...r.headers });
        for (const piece of r.sse) {
          // Split each piece in two so that frames also arrive cut in the middle.
          const cut = Math.floor(piece.length / 2);
          res.write(piece.slice(0, cut));
          await new Promise((ok) => setTimeout(ok, 1));
          res.write(piece.slice(cut));
        }
        res.end();
      } else {
        res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
        res.end(JSON.stringify(r.json));
      }
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((ok) => server.close(() => ok()));
  return state;
}
