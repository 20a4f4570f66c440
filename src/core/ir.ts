/**
 * The internal representation (IR) of an inference call. Every inbound API (OpenAI Chat Completions, OpenAI Responses,
 * Anthropic Messages) maps its request into an IrRequest, and every upstream adapter (OpenAI chat, Anthropic, Google
 * Gemini, OpenAI Responses) maps an IrRequest out to its wire format and maps its answer back into an IrResponse or a
 * sequence of IrStreamEvents. N inbound × M upstream protocols need N + M translations.
 *
 * The IR keeps what hub formats commonly lose: reasoning text with its signature, redacted reasoning, cache-control
 * marks, tool-call ids, refusals, and cache read/write token counts. Pure types (and one pure helper); no I/O.
 */

/** Anthropic-style prompt-caching mark, carried on any cacheable part. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface IrText {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

export interface IrImage {
  type: 'image';
  /** Either a URL (http(s) or data:) … */
  url?: string;
  /** … or inline base64 data with its media type. */
  data?: string;
  media_type?: string;
  detail?: 'auto' | 'low' | 'high';
  cache_control?: CacheControl;
}

/**
 * A document given as input (a PDF, a text file): inline base64 `data`, or a `file_id` of the upstream's own Files
 * API (OpenAI `file-…`, Anthropic `file_…`, a Gemini file URI), or a `url` the upstream fetches — with its media type
 * when known and its file name. Every upstream adapter sends it in its own shape (OpenAI chat `file`, Responses
 * `input_file`, Anthropic `document`, Gemini `inlineData` / `fileData`, Bedrock `document`); docs/internal-representation.md.
 */
export interface IrDocument {
  type: 'document';
  data?: string;
  file_id?: string;
  url?: string;
  media_type?: string;
  filename?: string;
  cache_control?: CacheControl;
}

/** A tool call made by the assistant. `arguments` is the JSON text exactly as produced. */
export interface IrToolCall {
  type: 'tool_call';
  id: string;
  name: string;
  arguments: string;
  /**
   * Set by a Responses upstream for a call to a namespaced tool (`name` is then the tool's own name inside the
   * namespace); a Responses client gets the call named back (inbound/responses-tools.ts).
   */
  namespace?: string;
  cache_control?: CacheControl;
}

/** The result of a tool call, sent back by the user side. */
export interface IrToolResult {
  type: 'tool_result';
  tool_call_id: string;
  /** Plain text, or rich parts (text and images). */
  content: string | Array<IrText | IrImage>;
  is_error?: boolean;
  cache_control?: CacheControl;
}

/** Visible reasoning ("thinking"), with the provider's signature when it gives one (needed to send it back). */
export interface IrReasoning {
  type: 'reasoning';
  text: string;
  signature?: string;
  /**
   * The protocol whose signature it is (`anthropic`, `google`), when known: an upstream adapter sends back only
   * signatures of its own protocol or of unknown origin (another provider's would be refused), and the Messages API
   * re-signs a foreign one with the gateway's signature (core/reasoning-signature.ts).
   */
  origin?: string;
  /** Summaries (OpenAI Responses) are marked so that they are not mistaken for full reasoning. */
  summary?: boolean;
}

/** Reasoning the provider returns encrypted/redacted; must be passed back verbatim. */
export interface IrRedactedReasoning {
  type: 'redacted_reasoning';
  data: string;
}

export interface IrRefusal {
  type: 'refusal';
  text: string;
}

export type IrPart = IrText | IrImage | IrDocument | IrToolCall | IrToolResult | IrReasoning | IrRedactedReasoning | IrRefusal;

/**
 * A turn of the conversation. `system` turns are instructions given mid-conversation (the Messages API's
 * `{"role": "system"}` messages, Claude Code's system reminders); each upstream carries them natively where it has
 * them (OpenAI chat and Responses: a system message in place; Anthropic: a system message in place when the request
 * carries an `anthropic-beta`, as Claude Code's does) and otherwise as a user-side text (docs/internal-representation.md).
 */
export interface IrMessage {
  role: 'user' | 'assistant' | 'system';
  content: IrPart[];
  /** OpenAI `name` on a message, kept when the upstream supports it. */
  name?: string;
}

export interface IrTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  strict?: boolean;
  cache_control?: CacheControl;
}

export type IrToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export type IrResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export interface IrReasoningConfig {
  /** `none` … `max`; mapped to each provider's knob (OpenAI effort, Anthropic budget, Gemini thinking budget). */
  effort?: 'max' | 'xhigh' | 'high' | 'medium' | 'low' | 'minimal' | 'none';
  /** Explicit token budget (Anthropic `budget_tokens`, Gemini `thinkingBudget`). */
  max_tokens?: number;
  enabled?: boolean;
  /** Ask for reasoning text in the answer (Gemini includeThoughts, OpenAI Responses summary). */
  summary?: 'auto' | 'concise' | 'detailed';
  /** Do not return reasoning text to the caller. */
  exclude?: boolean;
}

export interface IrRequest {
  /** The upstream model id (set by the gateway after routing). */
  model: string;
  /** System/developer instructions, as parts (cache-control marks kept). */
  system: IrText[];
  messages: IrMessage[];
  tools?: IrTool[];
  tool_choice?: IrToolChoice;
  parallel_tool_calls?: boolean;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  seed?: number;
  stop?: string[];
  response_format?: IrResponseFormat;
  reasoning?: IrReasoningConfig;
  /** End-user id (OpenAI `user`, Anthropic `metadata.user_id`). */
  user?: string;
  /** Output modalities asked for (chat `modalities`): `image` asks an image-capable model for images (Gemini). */
  modalities?: Array<'text' | 'image'>;
  stream: boolean;
  /** `anthropic-beta` header values of the client request, forwarded to Anthropic-protocol upstreams. */
  anthropic_beta?: string[];
  /**
   * Fields of the client body the IR does not carry (unknown fields, tool kinds and blocks of another protocol), by
   * path. They reach an upstream of the client's own protocol (the body passes through) and are dropped for the
   * others, which the answer's `X-Gateway-Dropped-Fields` header lists.
   */
  dropped_fields?: string[];
}

export type IrFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/** Token counts. `input` INCLUDES cache reads and writes; `output` INCLUDES reasoning (OpenAI conventions). */
export interface IrUsage {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  reasoning: number;
}

export interface IrResponse {
  /** The upstream's own id. */
  id: string | null;
  /** The upstream's model string. */
  model: string | null;
  /** Assistant output parts in order: reasoning, text, refusal, tool calls. */
  content: IrPart[];
  finish_reason: IrFinishReason;
  /** The provider's own stop reason. */
  native_finish_reason: string | null;
  usage: IrUsage | null;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

/**
 * Stream events, in order. Indexes identify an output part (a text block, a reasoning block, a tool call) so that
 * deltas of interleaved parts can be reassembled; a part starts with its first delta (or `tool_call_start`).
 */
export type IrStreamEvent =
  | { type: 'start'; id: string | null; model: string | null }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'reasoning_delta'; index: number; text: string }
  | { type: 'reasoning_signature'; index: number; signature: string; origin?: string }
  | { type: 'redacted_reasoning'; index: number; data: string }
  | { type: 'refusal_delta'; index: number; text: string }
  /** A whole generated image (base64 data), as one event: a part of its own (no part_end). */
  | { type: 'image'; index: number; data: string; media_type: string }
  /**
   * A partial image (a preview) of the image that the `image` event of the same index completes: OpenAI's streamed
   * `image_generation_call` partial images (0-based `partial_index`). Rendered by the Responses API only.
   */
  | { type: 'image_partial'; index: number; data: string; partial_index: number }
  | { type: 'tool_call_start'; index: number; id: string; name: string; namespace?: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'part_end'; index: number }
  | { type: 'finish'; finish_reason: IrFinishReason; native_finish_reason: string | null }
  | { type: 'usage'; usage: IrUsage }
  /** An error the upstream reported inside the stream. `status` is the gateway status it maps to. */
  | { type: 'error'; status: number; message: string; error_type: string; raw?: unknown };

export const emptyUsage = (): IrUsage => ({ input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 });

/** IR tool-call arguments (JSON text) as an object, for wire formats that want one: anything but a JSON object is `{}`. */
export function toolArgsObject(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
