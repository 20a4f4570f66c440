/**
 * The protocol registry (docs/adding-a-protocol.md): every upstream wire protocol the gateway speaks, with the
 * capabilities it implements and the functions implementing them. Services ask the registry — never a protocol's
 * folder — for the adapter of an endpoint's protocol; adding a protocol is one folder under providers/ plus one entry
 * here.
 *
 * Protocol names share one namespace: a provider's `protocol` (chat: openai, anthropic, google, openai-responses), an
 * endpoint's `speech_protocol`, `rerank_protocol` and `video.protocol`. Capabilities: chat (plain and streamed, through
 * the internal representation), the OpenAI chat fast path, token counting, embeddings, transcription, speech, rerank,
 * video, images.
 */
import { checkChatChunk, checkChatResponse } from './openai/schemas.js';
import type { TokenCounter, UpstreamAdapter, UpstreamContext, UpstreamHttpRequest } from '../core/adapters.js';
import type { EndpointDef, ImageProtocol, Protocol, ProviderDef, RerankProtocol, SpeechProtocol, VideoProtocol } from '../core/catalog-types.js';
import type { TokenUsage } from '../core/pricing.js';
import type { UpstreamError } from '../core/provider-errors.js';
import { anthropicAdapter } from './anthropic/index.js';
import { azureBuilder, azureError, azureImages, azureSpeech, onAzure } from './azure/index.js';
import { authorizeBedrock, awsCredentialProblem, bedrockAdapter, bedrockError } from './bedrock/index.js';
import { bedrockMaxInputs, buildBedrockEmbeddings, parseBedrockEmbeddings } from './bedrock/embeddings.js';
import { bedrockImageAdapter } from './bedrock/images.js';
import { MAX_IMAGES, MAX_SEED, STABILITY_RATIOS, TITAN_SIZES } from './bedrock/image-sizes.js';
import { bedrockRerankAdapter } from './bedrock/rerank.js';
import { onVertex, serviceAccountProblem } from './vertex/index.js';
import { anthropicCounter } from './anthropic/count-tokens.js';
import { geminiImageAdapter } from './gemini-image/index.js';
import { geminiTtsAdapter } from './gemini-tts/index.js';
import { googleAdapter } from './google/index.js';
import { googleCounter } from './google/count-tokens.js';
import { googleVeoAdapter } from './google-veo/index.js';
import { chatHeaders, chatUrl, openaiError, streamError, tokenUsage, type OpenAIUsage } from './openai/chat.js';
import { buildEmbeddingsRequest, parseEmbeddings, parseEmbeddingsError } from './openai/embeddings.js';
import { buildChatBody, openaiChatAdapter, parseChatResponse } from './openai/ir-upstream.js';
import { buildTranscriptionRequest, parseTranscription, parseTranscriptionError } from './openai/transcriptions.js';
import { openaiResponsesAdapter } from './openai-responses/index.js';
import { responsesCounter } from './openai-responses/count-tokens.js';
import { openaiImagesAdapter } from './openai-images/index.js';
import { openaiTtsAdapter } from './openai-tts/index.js';
import { openaiVideoAdapter } from './openai-video/index.js';
import { RERANK_ADAPTERS, rerankProtocolOf, type RerankAdapter } from './rerank/index.js';
import type { ImageAdapter } from './images.js';
import type { SpeechAdapter } from './speech.js';
import type { VideoAdapter } from './video-types.js';

export type { OpenAIUsage } from './openai/chat.js';
export type { Embedding, EmbeddingFormat } from './openai/embeddings.js';
export type { AudioFile, TranscriptionFormat, TranscriptionUsage } from './openai/transcriptions.js';
export type { RerankDocument } from './rerank/index.js';
export type { SpeechAdapter } from './speech.js';
export { SseEventBound } from './sse.js';
export type { ImageAdapter, ImageAnswer, ImageInput, ImageReference, ImageStreamDecoder, PartialImage } from './images.js';
/** Image output on the Responses protocol: its hosted image_generation tool (for bodies passed through as they came). */
export { withImageTool } from './openai-responses/upstream.js';
export type { VideoAdapter, VideoCallContext, VideoSubmitRequest } from './video-types.js';
export { VideoHttp } from './video-types.js';
export { rerankProtocolOf } from './rerank/index.js';
export { filesApiHeaders, type FilesApiProtocol } from './files-api.js';
export { imageFamily as bedrockImageFamily, type BedrockImageFamily } from './bedrock/image-sizes.js';
/** What Bedrock's image families take (for the image model listings). */
export const BEDROCK_IMAGE_LIMITS = { maxImages: MAX_IMAGES, maxSeed: MAX_SEED, titanSizes: TITAN_SIZES, stabilityRatios: STABILITY_RATIOS };

type ErrorParser = (status: number, text: string, headers: Record<string, string | string[] | undefined>) => UpstreamError;

/** The OpenAI chat wire as the chat fast path uses it (the client body passes through; chunks relayed as they come). */
export interface ChatWire {
  url(provider: ProviderDef): URL;
  headers(provider: ProviderDef, apiKey: string | null, stream: boolean): Record<string, string>;
  parseError: ErrorParser;
  /** An `{error}` payload inside an answer or a stream as an UpstreamError. */
  streamError(payload: { error?: { message?: string; code?: unknown; type?: string } }): UpstreamError;
  tokenUsage(u: OpenAIUsage | null | undefined): TokenUsage | null;
  /** The chat body of an IR request, and a chat answer read back as IR (the server-tool loop speaks chat internally). */
  buildBody: typeof buildChatBody;
  parseAnswer: typeof parseChatResponse;
  /** Schema checks of a chat answer and of a stream chunk at the edge (a malformed one is an UpstreamError). */
  checkResponse: typeof checkChatResponse;
  checkChunk: typeof checkChatChunk;
}

export interface EmbeddingsWire {
  build: typeof buildEmbeddingsRequest;
  parse: typeof parseEmbeddings;
  parseError: ErrorParser;
  /** Signs a built request (Bedrock's SigV4), when the protocol authenticates that way. */
  authorize?: (req: UpstreamHttpRequest, ctx: UpstreamContext) => Promise<UpstreamHttpRequest>;
  /** Inputs one call of the endpoint takes (absent: any number); a larger batch skips the endpoint. */
  maxInputs?: (endpoint: EndpointDef) => number;
}

export interface TranscriptionWire {
  build: typeof buildTranscriptionRequest;
  parse: typeof parseTranscription;
  parseError: ErrorParser;
}

/** What one protocol implements. */
export interface ProtocolEntry {
  chat?: UpstreamAdapter;
  chatWire?: ChatWire;
  countTokens?: TokenCounter;
  embeddings?: EmbeddingsWire;
  transcription?: TranscriptionWire;
  speech?: SpeechAdapter;
  rerank?: RerankAdapter;
  video?: VideoAdapter;
  images?: ImageAdapter;
}

export const PROTOCOLS = {
  openai: {
    chat: openaiChatAdapter,
    chatWire: { url: chatUrl, headers: chatHeaders, parseError: openaiError, streamError, tokenUsage, buildBody: buildChatBody, parseAnswer: parseChatResponse, checkResponse: checkChatResponse, checkChunk: checkChatChunk },
    embeddings: { build: buildEmbeddingsRequest, parse: parseEmbeddings, parseError: parseEmbeddingsError },
    transcription: { build: buildTranscriptionRequest, parse: parseTranscription, parseError: parseTranscriptionError },
  },
  'openai-responses': { chat: openaiResponsesAdapter, countTokens: responsesCounter },
  // Azure OpenAI (docs/clouds.md): OpenAI's bodies on Azure's deployment URLs, api-version and api-key/Entra auth.
  'azure-openai': {
    chat: onAzure(openaiChatAdapter, 'azure-openai'),
    embeddings: { build: azureBuilder(buildEmbeddingsRequest, 'embeddings'), parse: parseEmbeddings, parseError: azureError },
  },
  'azure-openai-responses': { chat: onAzure(openaiResponsesAdapter, 'azure-openai-responses') },
  // Amazon Bedrock's Converse API (docs/clouds.md): SigV4-signed, AWS event-stream framing; embeddings by InvokeModel.
  bedrock: { chat: bedrockAdapter, embeddings: { build: buildBedrockEmbeddings, parse: parseBedrockEmbeddings, parseError: bedrockError, authorize: authorizeBedrock, maxInputs: bedrockMaxInputs } },
  // Google Vertex AI (docs/clouds.md): Gemini and Anthropic bodies on Vertex URLs, service-account OAuth tokens.
  vertex: { chat: onVertex(googleAdapter, 'vertex') },
  'vertex-anthropic': { chat: onVertex(anthropicAdapter, 'vertex-anthropic') },
  anthropic: { chat: anthropicAdapter, countTokens: anthropicCounter },
  google: { chat: googleAdapter, countTokens: googleCounter },
  'openai-tts': { speech: openaiTtsAdapter },
  'gemini-tts': { speech: geminiTtsAdapter },
  jina: { rerank: RERANK_ADAPTERS.jina },
  cohere: { rerank: RERANK_ADAPTERS.cohere },
  voyage: { rerank: RERANK_ADAPTERS.voyage },
  'openai-video': { video: openaiVideoAdapter },
  'google-veo': { video: googleVeoAdapter },
  'openai-images': { images: openaiImagesAdapter },
  'gemini-image': { images: geminiImageAdapter },
  // Azure OpenAI's images and speech deployments (docs/clouds.md): OpenAI's wire on Azure's URLs and auth.
  'azure-openai-images': { images: azureImages(openaiImagesAdapter) },
  'azure-openai-tts': { speech: azureSpeech(openaiTtsAdapter) },
  // Amazon Bedrock's images through InvokeModel (Nova Canvas, Titan Image Generator, Stability) and its Rerank API.
  'bedrock-image': { images: bedrockImageAdapter },
  'bedrock-rerank': { rerank: bedrockRerankAdapter },
} satisfies Record<Protocol | SpeechProtocol | RerankProtocol | VideoProtocol | ImageProtocol, ProtocolEntry>;

/**
 * Why a key cannot authenticate against a provider (null when its shape is right): the clouds' structured
 * credentials (an AWS key pair, a Google service account) are checked when a BYOK credential is stored.
 */
export function keyProblem(p: ProviderDef, key: string): string | null {
  if (p.protocol === 'bedrock' && p.cloud?.auth !== 'api-key') return awsCredentialProblem(key);
  if (p.protocol === 'vertex' || p.protocol === 'vertex-anthropic') return serviceAccountProblem(key);
  return null;
}

/** The chat adapter of a provider protocol (every provider protocol has one). */
export const chatAdapter = (protocol: Protocol): UpstreamAdapter => PROTOCOLS[protocol].chat;

/** The OpenAI chat wire of the fast path. */
export const openaiChatWire: ChatWire = PROTOCOLS.openai.chatWire;

/** The token-counting API of a provider: its protocol's, or the one it declares (`token_counting`). */
export function tokenCounterOf(p: ProviderDef): TokenCounter | undefined {
  const own = (PROTOCOLS[p.protocol] as ProtocolEntry).countTokens;
  return own ?? (p.tokenCounting ? (PROTOCOLS[p.tokenCounting] as ProtocolEntry).countTokens : undefined);
}

/** The embeddings wire of a provider (OpenAI's `/embeddings`, which every embeddings provider in the catalog speaks). */
export const embeddingsWire = (p: ProviderDef): EmbeddingsWire => (PROTOCOLS[p.protocol] as ProtocolEntry).embeddings ?? PROTOCOLS.openai.embeddings;

/** The transcription wire of a provider (OpenAI's `/audio/transcriptions`, multipart). */
export const transcriptionWire = (_p: ProviderDef): TranscriptionWire => PROTOCOLS.openai.transcription;

/** The speech adapter of an endpoint's `speech_protocol`. */
export const speechAdapter = (protocol: SpeechProtocol): SpeechAdapter => PROTOCOLS[protocol].speech;

/** The rerank adapter of an endpoint (its `rerank_protocol`, default `jina`, the shape most servers speak). */
export const rerankAdapter = (e: EndpointDef): RerankAdapter => PROTOCOLS[rerankProtocolOf(e)].rerank;

/** The video adapter of a video protocol. */
export const videoAdapter = (protocol: VideoProtocol): VideoAdapter => PROTOCOLS[protocol].video;

/** The image adapter of an image protocol. */
export const imageAdapter = (protocol: ImageProtocol): ImageAdapter => PROTOCOLS[protocol].images;
