/**
 * The two adapter contracts around the internal representation (src/core/ir.ts):
 * - an UpstreamAdapter speaks one provider wire protocol (OpenAI chat, Anthropic Messages, Google Gemini,
 *   OpenAI Responses): IR request → HTTP request, HTTP answer → IR response or IR stream events, errors → UpstreamError;
 * - an InboundAdapter speaks one client-facing API (chat completions, responses, messages): client body → IR request,
 *   IR response → client body, IR stream events → the API's own event stream.
 * Adapters are pure translation (no I/O): the inference service does the HTTP, routing and accounting.
 */
import type { EndpointDef, Protocol, ProviderDef } from './catalog-types.js';
import type { IrRequest, IrResponse, IrStreamEvent, IrUsage } from './ir.js';
import type { UpstreamError } from './provider-errors.js';
import type { ReadBytes } from './byte-shape.js';

export interface UpstreamContext {
  provider: ProviderDef;
  endpoint: EndpointDef;
  /** The provider credential, or null for providers that need none. */
  apiKey: string | null;
}

export interface UpstreamHttpRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** Incremental decoder of one upstream response stream (bytes decoded to text by the caller). */
export interface StreamDecoder {
  /** Feeds the next piece of the body (any boundary: half an event, several events); returns the events completed. */
  push(text: string): IrStreamEvent[];
  /**
   * Binary streams (AWS event-stream framing): the raw bytes of the next read. When a decoder has it, the caller
   * feeds bytes here instead of text to `push`.
   */
  pushBytes?(bytes: Uint8Array): IrStreamEvent[];
  /**
   * Called when the body ended. Returns any final events; throws UpstreamError when the stream ended before the
   * protocol's terminal marker (e.g. no `[DONE]`, no `message_stop`, no finishReason).
   */
  end(): IrStreamEvent[];
  /**
   * The byte-level fast path of the common event (services/codec-ir-bytes.ts): whether the one complete event of
   * `read` (the stream's UTF-8 bytes, no CR, and their Latin-1 text) from `start` to `end` (its blank line excluded) is a
   * text delta or a piece of a started tool call's arguments that needs nothing from a parse — recognized by a strict
   * pattern that admits valid JSON only — and in the decoder's current state would decode to exactly one `text_delta`
   * or `tool_call_delta` of a non-empty string and change nothing else. Then `delta` describes it (until the next
   * call) and the caller does not feed the event to `push`; otherwise (null) it feeds it. It changes the decoder's
   * state only as decoding the event would — and, for a decoder with `rawTaken`, not at all (see there).
   */
  rawDelta?(read: ReadBytes, start: number, end: number): RawDelta | null;
  /**
   * `rawDelta` of the event that starts at `start` before its end is known (the caller has not searched for the
   * blank line): recognized from the bytes the decoder remembers of the stream's last delta alone, not by its
   * patterns. When the event is one (it ends where those bytes end and a blank line follows, before `limit`), its end
   * is `rawEnd` and the delta is returned as `rawDelta(read, start, rawEnd)` would return it; null tells nothing (the
   * caller goes on as without this method).
   */
  rawDeltaFrom?(read: ReadBytes, start: number, limit: number): RawDelta | null;
  /** Where the event of the last non-null `rawDeltaFrom` ends (its blank line starts). */
  rawEnd?: number;
  /**
   * Called when the delta that `rawDelta` just returned was written raw (the encoder took it), before anything else
   * is given to the decoder: the decoder makes the state changes that decoding the event would have made. A decoder
   * whose `rawDelta` changes state needs no such call (its changes must then be the same whether the event is taken
   * raw or fed to `push` after all).
   */
  rawTaken?(d: RawDelta): void;
}

/**
 * An IR text or tool-argument delta found in the bytes of an upstream event, its string not decoded: the JSON string
 * token (quotes included) is `buf` from `from` to `to`, Latin-1 text of UTF-8 bytes.
 */
export interface RawDelta {
  kind: 'text_delta' | 'tool_call_delta';
  /** The IR part index. */
  index: number;
  buf: string;
  from: number;
  to: number;
}

export interface UpstreamAdapter {
  readonly protocol: Protocol;
  buildRequest(req: IrRequest, ctx: UpstreamContext): UpstreamHttpRequest;
  /** Parses a 2xx non-streaming body; throws UpstreamError (502) when it is not a valid answer. */
  parseResponse(text: string): IrResponse;
  /** Maps a non-2xx answer to the gateway's error (status mapping: 400, 429 + Retry-After, 502, 524, 529). */
  parseError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError;
  createStreamDecoder(): StreamDecoder;
  /**
   * The last step before sending, for protocols whose credentials sign or are exchanged (SigV4, OAuth tokens): the
   * built request with its authentication added. Absent: `buildRequest` set the credentials already.
   */
  authorize?(req: UpstreamHttpRequest, ctx: UpstreamContext): Promise<UpstreamHttpRequest>;
}

/** What the gateway adds to an answer: its ids, the model that served, usage with cost, optional metadata. */
export interface AnswerMeta {
  /** The gateway's generation id (`gen-…`). */
  id: string;
  /** The catalog model id that served. */
  model: string;
  /** The provider's display name. */
  provider: string;
  /** Unix seconds. */
  created: number;
  /** USD, null when the endpoint's price is unknown. */
  cost: number | null;
  cost_details: { upstream_inference_prompt_cost: number | null; upstream_inference_completions_cost: number | null; upstream_inference_cost: number | null };
  /** Served on a BYOK credential (docs/byok.md): `usage.is_byok`. */
  is_byok?: boolean;
  gateway_metadata?: Record<string, unknown>;
  /** What a server-tool loop ran (services/server-tools.ts), reported in the answer's usage. */
  server_tools?: { tool_calls_requested: number; tool_calls_executed: number; web_search_requests: number };
}

/** The cost details of an answer without a price (no attempt served, or the endpoint's price is unknown). */
export const unpricedCostDetails = (): AnswerMeta['cost_details'] => ({ upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null });

/** Encoder of one client-facing event stream (SSE text out). */
export interface StreamEncoder {
  /** Bytes to send before any event (may be empty). */
  start(): string;
  /** Encodes one IR event (may return '' when the API has no equivalent or buffers it). */
  event(ev: IrStreamEvent): string;
  /** The successful end: final usage (and metadata), and the API's terminator. */
  finish(usage: IrUsage | null, meta: AnswerMeta): string;
  /** An error after the stream started: the API's error event and terminator. */
  error(status: number, message: string, errorType: string, meta: AnswerMeta): string;
  /**
   * The fast path's encoding (services/codec-ir-bytes.ts): what `event` would write for the IR delta `d` (its string
   * as the JSON token it came in), as Latin-1 text of UTF-8 bytes — or null when this delta needs `event` (then the
   * caller decodes it fully). Called only once the stream's content started.
   */
  rawDelta?(d: RawDelta): string | null;
}

export interface InboundAdapter {
  readonly api: 'chat' | 'responses' | 'messages' | 'gemini';
  /** The client body (already schema-validated) as an IR request; `model` is filled in after routing. */
  toIr(body: Record<string, unknown>): Omit<IrRequest, 'model'>;
  /** The IR answer as the API's response body. */
  fromIr(res: IrResponse, meta: AnswerMeta): Record<string, unknown>;
  createStreamEncoder(meta: AnswerMeta): StreamEncoder;
  /** The API's error body for a failed call (status and message already mapped). */
  errorBody(status: number, message: string, metadata: Record<string, unknown> | null): Record<string, unknown>;
}

/**
 * A protocol's token-counting API (`POST /messages/count_tokens`): the upstream request for a Messages body, and how
 * to read the count from its answer. `ir` gives the body in the internal representation, built on demand.
 */
export interface TokenCountInput {
  /** The caller's Messages body (schema-validated). */
  body: Record<string, unknown>;
  ir: () => Omit<IrRequest, 'model'>;
  /** The caller's `anthropic-beta` header (betas can change the count). */
  beta?: string;
}

export interface TokenCountRequest extends UpstreamHttpRequest {
  /** The count in a 2xx answer; throws UpstreamError (502) when there is none. */
  parse(text: string): number;
  parseError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError;
}

export type TokenCounter = (input: TokenCountInput, ctx: UpstreamContext) => TokenCountRequest;
