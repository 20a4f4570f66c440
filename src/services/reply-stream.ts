/** What every streamed reply shares: the head of an event stream, and waiting for a client that pushed back. */
import type { ServerResponse } from 'node:http';

/** The response head of an event stream (every streamed answer: chat, server-tool loops, cache hits). */
export function eventStreamHead(generationId: string | null, requestId: string): Record<string, string> {
  const head: Record<string, string> = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no', 'x-request-id': requestId };
  if (generationId) head['x-generation-id'] = generationId;
  return head;
}

/** Resolves when a response that pushed back can take more (or is closed). Shared by every streamed reply. */
export function drained(raw: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
}

/**
 * The client side of a relayed event stream: the 200 head written once (with the first content, or a keep-alive
 * comment), and writes that cost a promise only when the socket pushes back.
 */
export class StreamOut {
  committed = false;
  /** When something was last written (keep-alive comments fill long pauses). */
  lastWrite: number;

  constructor(
    private readonly raw: ServerResponse,
    private readonly generationId: string,
    private readonly requestId: string,
    private readonly now: () => number,
    /** Headers added to the head when it is written (e.g. what the serving attempt dropped). */
    private readonly extraHead?: () => Record<string, string> | undefined,
  ) {
    this.lastWrite = now();
  }

  /** Writes text or bytes (the chat relay's output is bytes); a promise only when the socket pushes back. */
  write(s: string | Buffer): Promise<void> | undefined {
    if (s.length === 0) return undefined;
    this.lastWrite = this.now();
    return this.raw.write(s) ? undefined : drained(this.raw);
  }

  commit(): void {
    if (this.committed) return;
    this.committed = true;
    const head = eventStreamHead(this.generationId, this.requestId);
    const extra = this.extraHead?.();
    if (extra) for (const k in extra) head[k] = extra[k];
    this.raw.writeHead(200, head);
  }
}

/** How `streamOneAnswer` writes its result: the generation id for the head, the answer's events, the error event. */
export interface OneAnswerEvents<T> {
  id(result: T): string | null;
  events(result: T): string;
  error(err: unknown): string;
}

/**
 * Writes events ahead of the answer while `work` runs (e.g. partial images): the first commits the 200 with the
 * generation id; a promise when the socket pushes back.
 */
export type EarlyEvents = (generationId: string | null, text: string) => Promise<void> | undefined;

/**
 * Answers one awaited result as an event stream (server-tool loops, streamed image generation): keep-alive comments
 * every `keepaliveMs` while `work` runs, the first of which commits the 200 (as does an early event `work` writes). A
 * failure before that is thrown (the route answers it as JSON); after it, the stream ends with the API's error event —
 * unless the client left (`cancelled`).
 */
export async function streamOneAnswer<T>(raw: ServerResponse, requestId: string, keepaliveMs: number, cancelled: () => boolean, work: (early: EarlyEvents) => Promise<T>, out: OneAnswerEvents<T>): Promise<void> {
  let committed = false;
  const commit = (id: string | null) => {
    if (committed) return;
    committed = true;
    raw.writeHead(200, eventStreamHead(id, requestId));
  };
  const early: EarlyEvents = (id, text) => {
    if (raw.destroyed) return undefined;
    commit(id);
    return raw.write(text) ? undefined : drained(raw);
  };
  const keepalive = setInterval(() => {
    if (raw.destroyed) return;
    commit(null);
    raw.write(': GATEWAY PROCESSING\n\n');
  }, Math.max(50, keepaliveMs));
  try {
    let result: T;
    try {
      result = await work(early);
    } catch (err) {
      if (!committed || cancelled()) throw err;
      raw.end(out.error(err));
      return;
    }
    commit(out.id(result));
    raw.end(out.events(result));
  } finally {
    clearInterval(keepalive);
  }
}
