/**
 * A simulated model call once routed (server.ts): latency, injected faults (`failTimes`, `errorStatus`, `hang`, chunk
 * faults, malformed bodies) and generation pacing, for complete replies and SSE streams alike.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { corrupt, type Malformed } from './corrupt.js';
import type { Knobs } from './knobs.js';
import { sseText, type Endpoint, type EndpointContext, type JsonReply, type SseEvent, type SseReply } from './protocol.js';
import { isAudioReply, writeAudio } from './tts.js';
import type { LoggedRequest, ProviderStats } from './server.js';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** The simulator's counters a model call updates: `failTimes` per provider, and its failures. */
export interface FaultCounts {
  failCounts: Map<string, number>;
  statsOf(provider: string): ProviderStats;
}

/** Per-request state for model calls: cancellation of waits and abort accounting. */
export interface ReqState {
  closed: boolean;
  /** We destroyed the socket on purpose (`disconnectAfterChunks`): not a client abort. */
  destroyedByUs: boolean;
  /** Cancels the pending wait, if any. */
  wake?: () => void;
  entry?: LoggedRequest;
}

/** Wait `ms`; resolves false (early) if the connection closes. */
export function sleep(ms: number, st: ReqState): Promise<boolean> {
  if (st.closed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      st.wake = undefined;
      resolve(true);
    }, ms);
    st.wake = () => {
      clearTimeout(t);
      st.wake = undefined;
      resolve(false);
    };
  });
}

/** Gap between content chunks in ms (0 = unpaced). */
function chunkGap(k: Knobs): number {
  if (k.chunkGapMs !== undefined) return k.chunkGapMs;
  return k.tokensPerSecond ? 1000 / k.tokensPerSecond : 0;
}

/** Write a complete JSON reply. */
export function send(res: ServerResponse, reply: JsonReply, ctx: EndpointContext, st?: ReqState, body = reply.body): void {
  if (st) {
    if (st.closed) return;
    if (st.entry) st.entry.status = reply.status;
  }
  res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(body), 'x-request-id': `req_${ctx.rid}` });
  res.end(body);
}

/** Destroy the connection on purpose (`disconnectAfterChunks`), after `data` (if any) is flushed. */
export function disconnect(res: ServerResponse, st: ReqState, data?: string | Uint8Array): void {
  st.destroyedByUs = true;
  if (data) res.write(data, () => res.destroy());
  else res.destroy();
}

/** Model call: latency, faults, generation pacing. */
export async function runModel(res: ServerResponse, ep: Endpoint, ctx: EndpointContext, st: ReqState, faults: FaultCounts): Promise<void> {
  const k = ctx.knobs;
  // Fault knobs apply to every request, or only to the first `failTimes` ones.
  let faulty = true;
  if (k.failTimes !== undefined) {
    const n = faults.failCounts.get(ctx.provider) ?? 0;
    faulty = n < k.failTimes;
    if (faulty) faults.failCounts.set(ctx.provider, n + 1);
  }
  const anyFault =
    k.errorStatus !== undefined || k.hang || k.errorAfterChunks !== undefined || k.disconnectAfterChunks !== undefined || k.malformed;
  const errorStatus = faulty ? (k.errorStatus ?? (k.failTimes !== undefined && !anyFault ? 500 : undefined)) : undefined;

  if (k.latencyMs && !(await sleep(k.latencyMs, st))) return;
  if (faulty && k.hang) return; // never answer; the 'close' handler cleans up
  if (errorStatus !== undefined) {
    faults.statsOf(ctx.provider).failures++;
    return send(res, ep.protocol.error(errorStatus, ctx), ctx, st);
  }

  const reply = ep.handle(ctx);
  const errorAfter = faulty ? k.errorAfterChunks : undefined;
  const disconnectAfter = faulty ? k.disconnectAfterChunks : undefined;
  const malformed = faulty ? k.malformed : undefined;
  if (reply.kind === 'sse') return stream(res, reply, ep, ctx, st, errorAfter, disconnectAfter, malformed);
  if (isAudioReply(reply) && reply.status === 200) {
    if (st.closed) return;
    const io = { sleep: (ms: number) => sleep(ms, st), disconnect: () => disconnect(res, st), status: (code: number) => void (st.entry && (st.entry.status = code)) };
    return writeAudio(res, reply, k, { errorAfter, disconnectAfter, malformed }, io, ctx.rid);
  }

  const body = reply.status === 200 && malformed ? corrupt(reply.body, malformed, k.hugeBytes) : reply.body;
  if (reply.status !== 200 || reply.chunks === undefined) return send(res, reply, ctx, st, body);
  // A complete response stands for `chunks` generated chunks: take the time to "generate" them.
  const gap = chunkGap(k);
  const fault = Math.min(errorAfter ?? Infinity, disconnectAfter ?? Infinity);
  const n = Math.min(fault, reply.chunks);
  const wait = (k.ttftMs ?? 0) + Math.max(0, (k.burstChunks ? Math.ceil(n / k.burstChunks) : n) - 1) * gap;
  if (wait > 0 && !(await sleep(wait, st))) return;
  if (fault !== Infinity) {
    if (fault === errorAfter) return send(res, ep.protocol.error(500, ctx), ctx, st);
    return disconnect(res, st);
  }
  send(res, reply, ctx, st, body);
}

/** Write an SSE reply, pacing content events and injecting chunk faults. */
async function stream(
  res: ServerResponse,
  reply: SseReply,
  ep: Endpoint,
  ctx: EndpointContext,
  st: ReqState,
  errorAfter: number | undefined,
  disconnectAfter: number | undefined,
  malformed: Malformed | undefined,
): Promise<void> {
  if (st.closed) return;
  if (st.entry) st.entry.status = 200;
  res.writeHead(200, { ...SSE_HEADERS, 'x-request-id': `req_${ctx.rid}`, ...reply.headers });
  if (malformed === 'empty') return void res.end();
  // SSE text, or the reply's own framing (binary event streams): `buf` holds what is not written yet.
  const frame = reply.frame;
  const enc = (ev: SseEvent): string | Uint8Array => (frame ? frame(ev) : sseText(ev));
  const join = (a: string | Uint8Array, b: string | Uint8Array): string | Uint8Array =>
    typeof a === 'string' && typeof b === 'string' ? a + b : Buffer.concat([Buffer.from(a), Buffer.from(b)]);
  const empty = (b: string | Uint8Array) => b.length === 0;

  const events = reply.events;
  // Index of the event before which a chunk fault fires: the N-th content event,
  // or right after the last content event when there are fewer.
  let firstContent = -1;
  let lastContent = -1;
  const contentIdx: number[] = [];
  for (let i = 0; i < events.length; i++) {
    if (events[i].content) {
      if (firstContent === -1) firstContent = i;
      lastContent = i;
      if (errorAfter !== undefined || disconnectAfter !== undefined) contentIdx.push(i);
    }
  }
  const faultAt = (n: number | undefined) => (n === undefined ? -1 : n < contentIdx.length ? contentIdx[n] : lastContent + 1);
  const errorIdx = faultAt(errorAfter);
  const disconnectIdx = faultAt(disconnectAfter);
  const brokenIdx = malformed ? Math.max(0, firstContent) : -1;

  const ttft = ctx.knobs.ttftMs ?? 0;
  const gap = chunkGap(ctx.knobs);
  const burst = gap > 0 ? (ctx.knobs.burstChunks ?? 0) : 0;
  if (ttft > 0 || gap > 0) res.flushHeaders();
  let buf: string | Uint8Array = '';
  let sent = 0; // content events written
  let t0 = 0; // time of the first content event (pacing reference, no drift)
  for (let i = 0; i <= events.length; i++) {
    if (i === errorIdx && (disconnectIdx === -1 || errorIdx <= disconnectIdx)) {
      return void res.end(join(buf, enc(ep.protocol.streamError(ctx))));
    }
    if (i === disconnectIdx) return disconnect(res, st, empty(buf) ? (frame ? undefined : ': sim\n\n') : buf);
    if (i === events.length) break;
    const ev = events[i];
    // ttft before the first event; then content events every `gap` ms from the first one.
    let wait = i === 0 ? ttft : 0;
    // In bursts: a pause of `gap` after every `burst` content events' write, however late it is.
    const boundary = burst > 0 && ev.content && sent > 0 && sent % burst === 0;
    if (boundary) wait = Math.max(wait, gap);
    else if (ev.content && sent > 0 && gap > 0 && burst === 0) wait = t0 + sent * gap - performance.now();
    if (wait >= 1 || boundary) {
      if (!empty(buf)) res.write(buf);
      buf = '';
      if (!(await sleep(wait, st))) return;
    }
    if (ev.content && sent++ === 0) t0 = performance.now();
    buf = join(buf, i === brokenIdx ? enc({ ...ev, data: corrupt(ev.data, malformed!, ctx.knobs.hugeBytes) }) : enc(ev));
  }
  res.end(buf);
}
