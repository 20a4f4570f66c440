/**
 * Contract between the simulator server (routing, knobs, timing, faults) and
 * the protocol modules (OpenAI today; Anthropic and Gemini later). A protocol
 * endpoint turns a parsed request into a `Reply` *plan*; the server decides
 * when and how the plan is written (delays, pacing, injected faults).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Knobs } from './knobs.js';

export interface EndpointContext {
  /** Simulated provider name (`default` for unprefixed paths). */
  provider: string;
  /** Path after the provider prefix, without the query string. */
  path: string;
  /** Query string without `?` ('' when absent). */
  query: string;
  /** Parsed JSON body (`undefined` for GET). */
  body: unknown;
  headers: IncomingHttpHeaders;
  /** Effective knobs: provider knobs overridden by `x-sim-*` headers. */
  knobs: Knobs;
  /** Unique request id within this simulator (base 36), for response ids. */
  rid: string;
  /** The request body as received (signature checks hash it). */
  rawBody?: string;
  /** The request path as received, provider prefix included, without the query string. */
  fullPath?: string;
}

/** A complete (non-streamed) response. */
export interface JsonReply {
  kind: 'json';
  status: number;
  body: string;
  headers?: OutgoingHttpHeaders;
  /**
   * Number of generated chunks the body stands for: the server waits the time
   * streaming them would take (ttft + pacing) and applies chunk-based faults.
   * Absent for errors and listings.
   */
  chunks?: number;
}

/** One server-sent event. */
export interface SseEvent {
  /** `event:` field (omitted when undefined, as in OpenAI streams). */
  event?: string;
  /** `data:` payload (a JSON text, or e.g. `[DONE]`). */
  data: string;
  /** True for events carrying generated content: they are paced and counted by chunk knobs. */
  content?: boolean;
}

/** A streamed response: status 200 and `text/event-stream`. */
export interface SseReply {
  kind: 'sse';
  events: SseEvent[];
  headers?: OutgoingHttpHeaders;
  /**
   * How an event goes on the wire when it is not SSE text (AWS event-stream messages): with it the reply's own
   * `content-type` header is sent, and the protocol's `streamError` event is framed the same way.
   */
  frame?: (ev: SseEvent) => Uint8Array;
}

export type Reply = JsonReply | SseReply;

/** Details of an error; protocols map them onto their envelope. */
export interface ErrorInfo {
  message?: string;
  type?: string;
  param?: string | null;
  code?: string | null;
}

/** Protocol-specific error rendering. */
export interface Protocol {
  name: string;
  /** Error response for `status` (the `errorStatus` knob, auth, validation, routing). */
  error(status: number, ctx: Partial<EndpointContext>, info?: ErrorInfo): JsonReply;
  /** In-stream error event (the `errorAfterChunks` knob). */
  streamError(ctx: EndpointContext): SseEvent;
}

export interface Endpoint {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path after the provider prefix: exact string or pattern. */
  path: string | RegExp;
  protocol: Protocol;
  /** Model calls are counted in stats/logs and get latency and fault knobs. */
  modelCall: boolean;
  handle(ctx: EndpointContext): Reply;
}

/** Serialize one event as SSE text. */
export function sseText(ev: SseEvent): string {
  return ev.event === undefined ? `data: ${ev.data}\n\n` : `event: ${ev.event}\ndata: ${ev.data}\n\n`;
}
