/**
 * Upstream video APIs (docs/videos.md): what the video service asks of an adapter, and the HTTP client they share.
 * A video job is three calls: submit (create the upstream job), poll (its state), download (the bytes, proxied to the
 * caller). The client keeps one keep-alive pool per origin and is closed at shutdown; only URLs built from a provider's
 * configured base URL are called with its credentials.
 */
import type { Dispatcher } from 'undici';
import type { EndpointDef, ProviderDef, Timeouts, VideoProtocol } from '../core/catalog-types.js';
import type { VideoContentRef } from '../store/types.js';
import { UpstreamError } from '../core/provider-errors.js';
import { networkError, OriginPools, tooLarge } from './http.js';

/** One video to generate, as sent upstream (already checked against the endpoint's capabilities). */
export interface VideoSubmitRequest {
  prompt: string | null;
  duration: number | null;
  resolution: string | null;
  aspect_ratio: string | null;
  size: string | null;
  first_frame: string | null;
  last_frame: string | null;
  /** Image references (URLs or data URLs). */
  references: string[];
  generate_audio: boolean | null;
  seed: number | null;
  /** `provider.options.<slug>`, filtered by the endpoint's `allowed_passthrough_parameters`. */
  options: Record<string, unknown>;
}

export interface VideoCallContext {
  provider: ProviderDef;
  endpoint: EndpointDef;
  apiKey: string | null;
  http: VideoHttp;
  timeouts: Timeouts;
  signal?: AbortSignal;
}

export type VideoPoll =
  | { state: 'running'; progress: number | null }
  | { state: 'completed'; content: VideoContentRef[]; seconds: number | null }
  | { state: 'failed'; message: string };

export interface VideoAdapter {
  protocol: VideoProtocol;
  /** Creates the upstream job; returns its id (OpenAI video id, Google operation name). Throws UpstreamError. */
  submit(ctx: VideoCallContext, req: VideoSubmitRequest): Promise<string>;
  /** The upstream job's state. Throws UpstreamError when the upstream cannot tell (transient or not). */
  poll(ctx: VideoCallContext, upstreamId: string): Promise<VideoPoll>;
  /** The bytes of one video: a 2xx response whose body the caller streams. Throws UpstreamError. */
  download(ctx: VideoCallContext, ref: VideoContentRef): Promise<Dispatcher.ResponseData>;
}

/** Calls that carry JSON (submit, poll) end within this long at most, whatever the provider's total timeout. */
export const VIDEO_CALL_TIMEOUT_MS = 120_000;

export interface VideoHttpCall {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  timeouts: Timeouts;
  signal?: AbortSignal;
}

/** A video API's JSON answers are small objects: more than this is refused (502) rather than buffered. */
const VIDEO_JSON_MAX_BYTES = 4 * 1024 * 1024;

/** A body read as UTF-8 text, refused (502) beyond `max` bytes. */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw tooLarge(max);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class VideoHttp {
  private readonly pools = new OriginPools({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });

  /** Sends a request; resolves when the headers arrive (any status). Network failures become UpstreamError. */
  async request(call: VideoHttpCall): Promise<Dispatcher.ResponseData> {
    return this.pools.request(call.method, call);
  }

  /**
   * A JSON call bounded by `VIDEO_CALL_TIMEOUT_MS`: the parsed 2xx body, or the upstream's error mapped by
   * `parseError`, or 502 for a body that is not JSON.
   */
  async json(call: VideoHttpCall, parseError: (status: number, text: string, headers: Record<string, string | string[] | undefined>) => UpstreamError): Promise<unknown> {
    const limit = Math.min(call.timeouts.totalMs, VIDEO_CALL_TIMEOUT_MS);
    const timeout = AbortSignal.timeout(limit);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    try {
      const res = await this.request({ ...call, signal });
      const text = await readCapped(res.body, VIDEO_JSON_MAX_BYTES);
      if (res.statusCode < 200 || res.statusCode >= 300) throw parseError(res.statusCode, text, res.headers);
      try {
        return JSON.parse(text);
      } catch {
        throw new UpstreamError(502, 'Provider returned an invalid response (not JSON)', 'provider_unavailable', res.statusCode, text.slice(0, 512));
      }
    } catch (err) {
      throw networkError(err, signal);
    }
  }

  async close(): Promise<void> {
    await this.pools.close();
  }
}

/** Reads and drops a response body (so that its connection returns to the pool). */
export async function drain(res: Dispatcher.ResponseData): Promise<void> {
  await res.body.dump().catch(() => undefined);
}

/** A non-2xx download answer as an UpstreamError (its body read for the message). */
export async function downloadError(
  res: Dispatcher.ResponseData,
  parseError: (status: number, text: string, headers: Record<string, string | string[] | undefined>) => UpstreamError,
): Promise<UpstreamError> {
  const text = await res.body.text().catch(() => '');
  return parseError(res.statusCode, text, res.headers);
}
