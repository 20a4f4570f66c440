/**
 * A streamed chat answer (any inbound API): attempts relayed to the client as they stream, keep-alive comments while
 * nothing flows, the API's final event with usage, cost and metadata, or its error event once content has flowed.
 */
import { StringDecoder } from 'node:string_decoder';
import type { ServerResponse } from 'node:http';
import type { Attempt } from '../../core/routing.js';
import type { UpstreamError } from '../../core/provider-errors.js';
import type { UpstreamExchange } from '../../providers/http.js';
import { droppedFieldsHeader, type StreamSession } from '../codecs.js';
import { streamBlockedError } from '../content-guardrails.js';
import type { AttemptLog } from '../attempts/errors.js';
import { runGeneration } from '../attempts/runner.js';
import { newGenerationId } from '../generation-id.js';
import { StreamOut } from '../reply-stream.js';
import { answerMeta, unservedMeta } from './record.js';
import { hold, withLast } from './held.js';
import { usedTokens, type ApiCallbacks, type ChatCall, type ChatEngine, type Outcome, type Prepared, type Relay } from './types.js';

/** One streamed answer's state: its ids, outcome, output and the attempt being relayed. */
interface StreamState {
  id: string;
  created: number;
  o: Outcome;
  out: StreamOut;
  raw: ServerResponse;
  cur: Relay;
  /** Starts the keep-alive comments (from the first attempt on, once its spend is admitted). */
  keepAlive: () => void;
}

/**
 * Relays a stream. Until the first content is forwarded, any failure moves on to the next endpoint; the 200 status
 * is committed with the first content, or earlier by a keep-alive comment when the wait is long. After content has
 * flowed, an error ends the stream with the API's error event (chat: a chunk with `finish_reason: "error"`).
 * Resolves with the generation id when the stream ended normally, null when it ended with an error (or the client
 * left).
 */
export async function relayStream(e: ChatEngine, p: Prepared, call: ChatCall, raw: ServerResponse): Promise<{ id: string } | null> {
  const id = newGenerationId();
  const o = e.fresh();
  // The head names what the serving attempt dropped (X-Gateway-Dropped-Fields), known once it is chosen.
  const out = new StreamOut(raw, id, call.requestId, () => e.now(), () => (o.attempt && p.dropped.size > 0 ? droppedFieldsHeader(p.dropped.get(`${o.attempt.model}|${o.attempt.endpoint.tag}`)) : undefined));
  // Keep-alive comments while nothing else is written (before the first token, and in long pauses) — from the first
  // attempt on, once its spend is admitted: a refusal (402/429/503) must still find the status uncommitted.
  let keepalive: NodeJS.Timeout | undefined;
  const keepAlive = () =>
    void (keepalive ??= setInterval(() => {
      if (raw.destroyed || e.now() - out.lastWrite < e.keepaliveMs) return;
      out.commit();
      void out.write(': GATEWAY PROCESSING\n\n');
    }, Math.max(50, Math.floor(e.keepaliveMs / 2))));
  // The current attempt's stream, and the output of its last read once the upstream body is complete (written with
  // the final event, in one write).
  const cur: Relay = { session: null, held: '', tap: p.io ? p.io.chunks : null };
  const st: StreamState = { id, created: Math.floor(e.now() / 1000), o, out, raw, cur, keepAlive };
  try {
    return await runGeneration(e.generation<StreamSession, { id: string } | null>(p, call, id, o, streamCallbacks(e, p, call, st)));
  } finally {
    clearInterval(keepalive);
    if (out.committed && !raw.writableEnded) raw.end();
  }
}

/** The runner's callbacks of a streamed answer. */
function streamCallbacks(e: ChatEngine, p: Prepared, call: ChatCall, st: StreamState): ApiCallbacks<StreamSession, { id: string } | null> {
  const { id, created, o, out, raw, cur } = st;
  return {
    attempt: (a, i, t0) => attemptStream(e, p, call, st, a, i, t0),
    sample: () => {
      const genMs = o.firstTokenAt !== null ? e.now() - o.firstTokenAt : 0;
      return { ttftMs: o.ttftMs ?? 0, tokensPerSecond: o.usage && genMs > 0 ? (o.usage.completionTokens * 1000) / genMs : null };
    },
    served: (_a, s, _i, attempts) => {
      o.outputPipeline = s.outputPipeline?.();
      if (s.blocked) return blockedStream(e, p, call, st, s, attempts);
      // Usage (with cost) and metadata on the API's final event, then its terminator.
      const meta = answerMeta(p, o, attempts, id, created, call, true);
      out.commit();
      // The last output, the final event and the end of the response in one socket write.
      raw.end(withLast(cur.held, s.finishOut(meta)));
      e.record(p, call, id, o, attempts, meta.cost);
      return { result: { id }, cost: meta.cost, tokens: usedTokens(o) };
    },
    failed: (err, _a, attempts) => failedStream(e, p, call, st, err, attempts),
    exhausted: (error, cancelled, lastAttempt, attempts) => {
      if (cancelled) return { result: null };
      if (!out.committed) return undefined;
      // Only keep-alive comments were sent: the error goes in the stream, in the API's own shape.
      const meta = unservedMeta(p, o, attempts, id, created, call, lastAttempt);
      const s = lastAttempt ? e.codec(p, lastAttempt).openStream(meta) : null;
      if (s) raw.end(s.errorOut(error.status, error.message, String(error.metadata?.error_type ?? 'provider_unavailable'), meta));
      return { result: null };
    },
  };
}

/** One attempt: sent, then relayed until its stream ends; what the record and the final event need is kept. */
async function attemptStream(e: ChatEngine, p: Prepared, call: ChatCall, st: StreamState, a: Attempt, i: number, t0: number): Promise<StreamSession> {
  const { o, cur } = st;
  st.keepAlive();
  cur.session = null;
  cur.held = '';
  const codec = e.codec(p, a);
  const res = await e.send(p, a, call, codec, true);
  try {
    // Until content flows, the attempt may still be replaced: it is "current" only for metadata.
    o.attempt = a;
    o.attemptNo = i + 1;
    const s = (cur.session = codec.openStream(answerMeta(p, o, [], st.id, st.created, call, false)));
    await pipe(e, cur, s, res, st.out, o, t0);
    // Success: what the record and the final event need.
    if (o.ttftMs === null) o.ttftMs = Math.round(e.now() - t0);
    o.status = 200;
    o.usage = s.usage();
    o.upstreamId = s.upstreamId;
    o.finish = s.finish;
    o.nativeFinish = s.native;
    return s;
  } finally {
    res.close();
  }
}

/** An attempt that failed: before content flowed, the runner moves on (undefined); after, the stream ends with the error event. */
function failedStream(e: ChatEngine, p: Prepared, call: ChatCall, st: StreamState, err: UpstreamError, attempts: AttemptLog[]) {
  const { o, raw, cur } = st;
  const s = cur.session;
  if (cur.held.length > 0 && !s?.contentStarted) {
    raw.write(cur.held); // what was produced stays sent, as when it is written at once
    cur.held = '';
  }
  if (!s?.contentStarted) return undefined;
  // Too late to fall back (or the client left): what was produced is billed — the upstream's usage when it
  // came, else the output counted so far (docs/spend.md, "Cut streams"); the stream ends with the error event.
  const cancelled = err.type === 'cancelled' || call.cancel.aborted;
  Object.assign(o, { status: err.status, error: err, cancelled, finish: 'error', ...cutUsage(p, s), upstreamId: s.upstreamId, nativeFinish: s.native });
  const meta = answerMeta(p, o, attempts, st.id, st.created, call, true);
  const masked = err.status >= 500 ? 'Provider error during the stream' : err.message;
  st.out.commit();
  raw.end(withLast(cur.held, s.errorOut(err.status, masked, err.type, meta)));
  e.record(p, call, st.id, o, attempts, meta.cost);
  return { result: null, cost: meta.cost, tokens: usedTokens(o) };
}

/**
 * A streamed reply that a content guardrail blocked (the upstream was left at the block): what was sent stays sent,
 * the stream ends with the API's error event (403, naming the guardrail), and the generation is recorded as blocked
 * with the usage reported so far.
 */
function blockedStream(e: ChatEngine, p: Prepared, call: ChatCall, st: StreamState, s: StreamSession, attempts: AttemptLog[]) {
  const { o } = st;
  const err = streamBlockedError(s.blocked!, [...(p.pipeline ?? []), ...(o.outputPipeline ?? [])]);
  // Billed and settled like a cut stream: the upstream's usage when it came, else the output it produced so far.
  Object.assign(o, { status: err.status, error: err, finish: 'content_filter', ...cutUsage(p, s) });
  const meta = answerMeta(p, o, attempts, st.id, st.created, call, true);
  st.out.commit();
  st.raw.end(withLast(st.cur.held, s.errorOut(err.status, err.message, 'content_filter', meta)));
  e.record(p, call, st.id, o, attempts, meta.cost);
  return { result: null, cost: meta.cost, tokens: usedTokens(o) };
}

/**
 * Relays an upstream stream to the client until it ends; the output of its last read is held back in `cur.held`, to
 * go out with the final event. Throws the stream's failure once what came before it was written (or held).
 */
async function pipe(e: ChatEngine, cur: Relay, session: StreamSession, res: UpstreamExchange, out: StreamOut, o: Outcome, t0: number): Promise<void> {
  const decoder = new StringDecoder('utf8'); // keeps characters split across reads; cheaper than TextDecoder
  for (let chunk = await res.read(); chunk !== null; chunk = await res.read()) {
    const text = session.push(session.binary ? chunk : decoder.write(chunk));
    if (session.contentStarted && o.firstTokenAt === null) {
      o.firstTokenAt = e.now();
      o.ttftMs = Math.round(o.firstTokenAt - t0);
    }
    if (text) {
      if (cur.tap) cur.tap.push(typeof text === 'string' ? text : text.toString());
      out.commit();
      if (res.finished) cur.held = hold(cur.held, text);
      else {
        const pushback = out.write(text);
        if (pushback) await pushback;
      }
    }
    if (session.failure) throw session.failure;
    if (session.blocked) return; // a content guardrail stopped the reply: nothing more is read
  }
  const tail = session.end();
  if (tail) {
    if (cur.tap) cur.tap.push(tail);
    out.commit();
    cur.held = hold(cur.held, tail);
  }
  if (session.failure) throw session.failure;
}

/**
 * The usage of a stream that ended early (cut, failed or blocked after content flowed): the upstream's when it came,
 * else the output counted so far with the prompt estimated (docs/spend.md, "Cut streams").
 */
function cutUsage(p: Prepared, s: StreamSession): { usage: Outcome['usage']; estimated: boolean } {
  const usage = s.usage();
  if (usage) return { usage, estimated: false };
  return { usage: { promptTokens: p.promptEstimate, completionTokens: Math.min(s.producedTokens, p.maxOut ?? Infinity) }, estimated: true };
}
