/**
 * The image generation adapter contract (`POST /images`, docs/images.md) and what the image adapters share.
 *
 * An ImageAdapter speaks one upstream image API: validated request → HTTP request, error answer → UpstreamError,
 * 2xx answer (one JSON body) → the images and the usage it reports. Adapters are pure translation (no I/O): the images
 * service does the HTTP, routing and accounting.
 */
import type { EndpointDef, ImageProtocol } from '../core/catalog-types.js';
import type { TokenUsage } from '../core/pricing.js';
import { UpstreamError } from '../core/provider-errors.js';
import type { UpstreamContext, UpstreamHttpRequest } from '../core/adapters.js';

export type Headers = Record<string, string | string[] | undefined>;

/** A reference image as the client gave it: a `data:image/…;base64,` URL or an http(s) URL. */
export interface ImageReference {
  url: string;
}

/** A validated image request, as the adapters see it. */
export interface ImageInput {
  prompt: string;
  n: number;
  size?: string;
  aspect_ratio?: string;
  quality?: string;
  background?: string;
  output_format?: string;
  output_compression?: number;
  seed?: number;
  references: ImageReference[];
  /** The matched provider's `provider.options` (null values removed): fields the gateway does not set itself. */
  options: Record<string, unknown>;
  /** Asked only of an adapter with `streamDecoder`: answer as the API's event stream, with this many partial images. */
  stream?: { partialImages: number };
}

/** A partial image of a streamed answer, as it arrives (0-based `index` within its image). */
export interface PartialImage {
  b64: string;
  index: number;
}

/** Reads a streamed images answer: text in, partial images out as they complete; the whole answer at the end. */
export interface ImageStreamDecoder {
  /** The next piece of the body; the partial images it completed. Throws UpstreamError for an error event or bad data. */
  push(text: string): PartialImage[];
  /** End of the body: the final images and usage (throws UpstreamError when the stream ended without an image). */
  end(): ImageAnswer;
}

/** One generated image. */
export interface GeneratedImage {
  b64: string;
  /** `image/png`, … (sniffed from the bytes when the provider does not say); null when unknown. */
  mediaType: string | null;
}

/** A valid upstream answer. */
export interface ImageAnswer {
  images: GeneratedImage[];
  /** Tokens the upstream reported (null when none). */
  usage: TokenUsage | null;
  upstreamId: string | null;
  /** Text the model wrote beside the images (Gemini), if any. */
  text: string | null;
}

export interface ImageAdapter {
  readonly protocol: ImageProtocol;
  /** Whether the API can take these reference images (e.g. Gemini takes inline data only). */
  acceptsReferences(refs: readonly ImageReference[]): boolean;
  buildRequest(req: ImageInput, ctx: UpstreamContext): { req: UpstreamHttpRequest; dropped: string[] };
  /**
   * Why the endpoint's model cannot take the request's values (a size or aspect ratio its family lacks, too many
   * images, a seed out of range): the field to name and the reason; null when it can. Routing skips such endpoints,
   * and a request no endpoint can take is refused with a 400 naming the field. Absent: every value is taken.
   */
  problem?(req: Pick<ImageInput, 'n' | 'size' | 'aspect_ratio' | 'seed' | 'output_format'>, endpoint: EndpointDef): { field: string; message: string } | null;
  /** Signs the built request (Bedrock's SigV4), when the protocol authenticates that way. */
  authorize?(req: UpstreamHttpRequest, ctx: UpstreamContext): Promise<UpstreamHttpRequest>;
  parseError(status: number, text: string, headers: Headers): UpstreamError;
  /** A 2xx answer; throws UpstreamError (502) when it is not a valid one or holds no image. */
  parse(text: string): ImageAnswer;
  /** The API streams natively (partial images): a decoder of a 2xx event stream. Absent: answers are whole. */
  streamDecoder?(): ImageStreamDecoder;
}

export const invalidImage = (message: string, raw: unknown = null) => new UpstreamError(502, message, 'provider_unavailable', 200, raw);

/** An image upstream's reply body as JSON, or a 502 saying it is not JSON (`what` names the reply in the message). */
export function imageJson(text: string, what = 'response'): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidImage(`Provider returned an invalid ${what}: not JSON`, text.slice(0, 512));
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The media type of image bytes, from their first bytes (PNG, JPEG, WebP, GIF, SVG); null when unknown. */
export function sniffImageType(b64: string): string | null {
  const head = Buffer.from(b64.slice(0, 64), 'base64');
  if (head.length >= 8 && head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  if (head.length >= 4 && head.toString('latin1', 0, 4) === 'GIF8') return 'image/gif';
  const text = head.toString('utf8').trimStart();
  if (text.startsWith('<svg') || text.startsWith('<?xml')) return 'image/svg+xml';
  return null;
}

/** Base64 image data from an answer, checked (never relayed when it is not base64, or empty). */
export function imageData(b64: unknown, where: string): string {
  if (typeof b64 !== 'string' || b64.length === 0 || !BASE64.test(b64.replace(/\s+/g, ''))) throw invalidImage(`Provider returned an invalid image: ${where} is not base64 data`);
  return b64.replace(/\s+/g, '');
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/i;

/** A `data:image/…;base64,…` URL split into its media type and data; null for any other URL. */
export function parseDataUrl(url: string): { mimeType: string; data: string } | null {
  const m = DATA_URL.exec(url);
  return m ? { mimeType: m[1].toLowerCase(), data: m[2].replace(/\s+/g, '') } : null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Provider options added to an upstream body: only fields the gateway left unset are filled in. */
export function fillUnset(target: Obj, options: Obj): Obj {
  for (const [k, v] of Object.entries(options)) {
    if (v === null || v === undefined) continue;
    if (target[k] === undefined) target[k] = v;
    else if (isObj(target[k]) && isObj(v)) fillUnset(target[k] as Obj, v);
  }
  return target;
}
