/**
 * Small helpers shared by the chat suites: raw chat calls (JSON and SSE), SSE parsing, and waiting for the simulator
 * to observe something.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createSimulator } from '../../src/sim/index.js';
import { simCatalog, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey, startGateway, type Backend } from '../helpers.js';

export const USER = [{ role: 'user' as const, content: 'hello' }];

/** 388 characters: the simulator counts ceil(388 / 4) + 3 = 100 prompt tokens for this single message. */
export const PROMPT_100 = 'abcd'.repeat(97);

export const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' } },
      required: ['city', 'days'],
      additionalProperties: false,
    },
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ChatReply {
  status: number;
  body: Json;
  headers: Headers;
}

/** POST /chat/completions with the env's inference key (or `key`), JSON in and out. */
export function chat(env: ChatEnv, body: Record<string, unknown>, opts: { key?: string | null; headers?: Record<string, string> } = {}): Promise<ChatReply> {
  return env.t.call('POST', '/chat/completions', { key: opts.key === undefined ? env.key : opts.key, body: { messages: USER, ...body }, headers: opts.headers });
}

export interface SseReply {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed `data:` payloads, `[DONE]` excluded. */
  chunks: Json[];
  /** Whether the stream ended with `data: [DONE]`. */
  done: boolean;
  /** Number of `: GATEWAY PROCESSING` comment lines. */
  keepalives: number;
  /** Index (in `text`) of the first `data:` line, -1 when none. */
  firstDataAt: number;
}

export function parseSse(text: string): Omit<SseReply, 'status' | 'headers' | 'text'> {
  const chunks: Json[] = [];
  let done = false;
  let keepalives = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(': GATEWAY PROCESSING')) keepalives++;
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') done = true;
    else chunks.push(JSON.parse(data));
  }
  return { chunks, done, keepalives, firstDataAt: text.indexOf('data: ') };
}

/** POST /chat/completions with `stream: true`; reads the whole reply. */
export async function streamChat(env: ChatEnv, body: Record<string, unknown>, opts: { key?: string; headers?: Record<string, string> } = {}): Promise<SseReply> {
  const res = await fetch(`${env.t.api}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.key ?? env.key}`, 'content-type': 'application/json', ...opts.headers },
    body: JSON.stringify({ messages: USER, ...body, stream: true }),
  });
  const text = await res.text();
  const parsed = res.headers.get('content-type')?.startsWith('text/event-stream') ? parseSse(text) : { chunks: [], done: false, keepalives: 0, firstDataAt: -1 };
  return { status: res.status, headers: res.headers, text, ...parsed };
}

/** Text content of streamed chunks. */
export const streamedText = (chunks: Json[]) => chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

/** Polls `check` until it returns true (or fails after `ms`). */
export async function until(check: () => boolean | Promise<boolean>, ms = 5_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  if (!(await check())) throw new Error(`timed out waiting for ${what}`);
}

/** Upstream request bodies the simulator received for one provider, oldest first. */
export const upstreamBodies = (env: ChatEnv, provider: string): Json[] => env.sim.requests.filter((r) => r.provider === provider).map((r) => r.body);

type CatalogExtra = NonNullable<Parameters<typeof simCatalog>[1]>;

/** A chat env whose gateway runs on a clock the test can move forward. */
export interface ClockedEnv extends ChatEnv {
  /** Moves the gateway's clock forward by `ms`. */
  advance(ms: number): void;
}

/**
 * Like `startChatEnv`, with two additions: the extra catalog entries are built from the simulator's URL (so that an
 * extra provider, e.g. one with short timeouts, can point at the simulator too), and the gateway's clock can be moved
 * forward.
 */
export async function startClockedEnv(
  backend: Backend,
  opts: { extra?: (simUrl: string) => CatalogExtra; env?: Record<string, string> | ((simUrl: string) => Record<string, string>) } = {},
): Promise<ClockedEnv> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-chat-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify(simCatalog(sim.url, opts.extra?.(sim.url))));
  let skew = 0;
  const env = typeof opts.env === 'function' ? opts.env(sim.url) : opts.env;
  const t = await startGateway(backend, { env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false', ...env }, gateway: { now: () => Date.now() + skew } });
  const { key, hash } = await createInferenceKey(t, { name: 'chat-tests' });
  return {
    sim,
    t,
    key,
    keyHash: hash,
    advance: (ms) => {
      skew += ms;
    },
    close: async () => {
      await t.close();
      await sim.close();
    },
  };
}

/**
 * One gateway for a describe block of tests that inject upstream failures. The gateway remembers failed endpoints for
 * 30 s (they are tried last, or answered with 503 when all of them failed), so before each test its clock moves past
 * that window, and the simulator's knobs and stats are reset: no failure leaks from one test into the next.
 */
export function isolatedEnv(
  hooks: { beforeAll: (fn: () => Promise<void>) => void; afterAll: (fn: () => Promise<void>) => void; beforeEach: (fn: () => void) => void },
  opts: Parameters<typeof startClockedEnv>[1] = {},
): () => ClockedEnv {
  let env: ClockedEnv | undefined;
  hooks.beforeAll(async () => {
    env = await startClockedEnv('sqlite', opts);
  });
  hooks.afterAll(async () => {
    await env?.close();
  });
  hooks.beforeEach(() => {
    if (!env) return;
    env.advance(31_000);
    env.sim.resetKnobs();
    env.sim.resetStats();
  });
  return () => {
    if (!env) throw new Error('no env (used outside a test?)');
    return env;
  };
}
