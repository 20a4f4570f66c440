/** What a codec is: how one upstream attempt is encoded and decoded (see codecs.ts), and its stream session. */
import type { UpstreamError } from '../core/provider-errors.js';
import type { TokenUsage } from '../core/pricing.js';
import type { CompiledFilter } from '../core/content-filters/index.js';
import type { AnyPipelineEntry as PipelineEntry } from '../core/plugins.js';
import type { AnswerMeta, UpstreamContext, UpstreamHttpRequest } from '../core/adapters.js';

/** A parsed non-streaming answer, rendered for the client once cost and metadata are known. */
export interface ParsedAnswer {
  usage: TokenUsage | null;
  finish: string | null;
  native: string | null;
  upstreamId: string | null;
  render(meta: AnswerMeta): Record<string, unknown>;
}

/** One relayed stream: upstream text in, client bytes out. Throws UpstreamError on upstream errors. */
export interface StreamSession {
  /**
   * Client bytes for the next upstream text (a Buffer where they are relayed as bytes). An upstream error is thrown — unless output was produced earlier in the
   * same text: then that output is returned and the error is left in `failure` for the caller to raise after writing.
   */
  push(text: string | Uint8Array): string | Buffer;
  /** The upstream stream is binary (AWS event stream): `push` takes the raw bytes of each read. */
  readonly binary: boolean;
  readonly failure: UpstreamError | null;
  /**
   * Output tokens produced so far as counted from the relayed deltas (UTF-8 characters / 4, at least one per output
   * event): what a stream cut before the upstream's usage is billed for (docs/spend.md, "Cut streams").
   */
  readonly producedTokens: number;
  /** True once content (a token, a tool call, reasoning) has been produced for the client. */
  readonly contentStarted: boolean;
  /** The upstream body ended: the last client bytes; throws when the upstream stream was incomplete. */
  end(): string;
  finishOut(meta: AnswerMeta): string;
  errorOut(status: number, message: string, errorType: string, meta: AnswerMeta): string;
  usage(): TokenUsage | null;
  readonly finish: string | null;
  readonly native: string | null;
  readonly upstreamId: string | null;
  /** Content guardrails on the output (streams opened with filters): the filter that blocked it, once one did. */
  readonly blocked?: CompiledFilter | null;
  /** Content guardrails on the output: what the filters did, as `gateway_metadata.pipeline` entries. */
  outputPipeline?(): PipelineEntry[];
}

/** An attempt's upstream request: the body as bytes where the codec built them so (the same-protocol chat path). */
export type AttemptRequest = Omit<UpstreamHttpRequest, 'body'> & { body: string | Buffer | Buffer[] };

export interface AttemptCodec {
  request(ctx: UpstreamContext, stream: boolean): { req: AttemptRequest; dropped: string[] };
  /** The upstream protocol's last step before sending (signing, OAuth tokens); absent when `request` is final. */
  authorize?(req: AttemptRequest, ctx: UpstreamContext): Promise<AttemptRequest>;
  parseError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError;
  parse(text: string): ParsedAnswer;
  openStream(meta: AnswerMeta): StreamSession;
}
