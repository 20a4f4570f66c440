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
    this.raw.writeHead(200, { ...eventStreamHead(this.generationId, this.requestId), ...this.extraHead?.() });
  }
}
