/**
 * Video generation models and endpoints the gateway ships (POST /videos; docs/videos.md). Kept apart from the chat
 * lists of default-catalog.ts, whose invariants (token prices, chat parameters, context limits) video endpoints do not
 * share; `shippedCatalog()` adds them.
 *
 * - An endpoint's `video` field says what it accepts and which upstream API it speaks; such endpoints are routed by the
 *   video service only, never by the chat APIs.
 * - Prices: `pricing.video_second` is USD per second of generated video, `video.second_price_by_resolution` overrides
 *   it per output resolution; `pricing.video` (USD per video) is also understood. Token prices are "0".
 *
 * Google Veo through the Gemini API (ai.google.dev/gemini-api/docs/video and /pricing, checked 2026-11): audio is
 * always generated; 4, 6 or 8 seconds; 16:9 or 9:16; 720p and 1080p (1080p and 4K only with 8 seconds, which Google
 * enforces); billed per second of output, only for videos actually generated.
 *
 * Deliberately absent: OpenAI's Sora 2 / Sora 2 Pro and the Videos API, shut down on 2026-09-24 per OpenAI's
 * deprecation notice. The `openai-video` protocol stays for OpenAI-compatible video servers added in the config file.
 *
 * Pure data; no I/O.
 */
import type { EndpointDef, ModelDef, VideoCapabilities } from '../core/catalog-types.js';
import { apiModel, unixDay as unix } from './model-defaults.js';

/** Parameters a video endpoint may honour (for `provider.require_parameters`). */
export const VIDEO_PARAMETERS = ['duration', 'resolution', 'aspect_ratio', 'size', 'frame_images', 'input_references', 'generate_audio', 'seed'] as const;

function videoModel(m: Pick<ModelDef, 'id' | 'name' | 'created' | 'description'>): ModelDef {
  return apiModel({ ...m, context_length: 0 }, { input: ['text', 'image'], output: ['video'] });
}

function videoEndpoint(e: { model: string; provider: string; upstreamModel: string; perSecond: string; video: VideoCapabilities }): EndpointDef {
  const params = VIDEO_PARAMETERS.filter((p) => {
    const v = e.video;
    if (p === 'duration') return v.durations !== null;
    if (p === 'resolution') return v.resolutions !== null;
    if (p === 'aspect_ratio') return v.aspect_ratios !== null;
    if (p === 'size') return v.sizes !== null || (v.resolutions !== null && v.aspect_ratios !== null);
    if (p === 'frame_images') return v.frame_images !== null;
    if (p === 'generate_audio') return v.generate_audio === true;
    if (p === 'seed') return v.seed === true;
    return true;
  });
  return {
    model: e.model,
    provider: e.provider,
    tag: e.provider,
    upstreamModel: e.upstreamModel,
    pricing: { prompt: '0', completion: '0', video_second: e.perSecond },
    context_length: 0,
    max_prompt_tokens: null,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: params,
    is_moderated: true,
    supports_implicit_caching: false,
    video: e.video,
  };
}

const VEO_31: Omit<VideoCapabilities, 'resolutions' | 'second_price_by_resolution'> = {
  protocol: 'google-veo',
  aspect_ratios: ['16:9', '9:16'],
  sizes: null,
  durations: [4, 6, 8],
  frame_images: ['first_frame', 'last_frame'],
  generate_audio: true,
  seed: true,
  allowed_passthrough_parameters: ['negativePrompt', 'personGeneration'],
  default_duration: 8,
  default_resolution: '720p',
};

export const DEFAULT_VIDEO_MODELS: ModelDef[] = [
  videoModel({
    id: 'google/veo-3.1',
    name: 'Google: Veo 3.1',
    created: unix('2025-10-15'),
    description: "Google's highest-fidelity video model: text or image to video with native audio, up to 4K.",
  }),
  videoModel({
    id: 'google/veo-3.1-fast',
    name: 'Google: Veo 3.1 Fast',
    created: unix('2025-10-15'),
    description: 'Faster, cheaper Veo 3.1 variant for iteration: text or image to video with native audio, up to 4K.',
  }),
  videoModel({
    id: 'google/veo-3.1-lite',
    name: 'Google: Veo 3.1 Lite',
    created: unix('2026-03-31'),
    description: 'The most cost-effective Veo 3.1 model for high-volume use: 720p or 1080p video with native audio.',
  }),
];

export const DEFAULT_VIDEO_ENDPOINTS: EndpointDef[] = [
  // $0.40/s (720p, 1080p), $0.60/s at 4K.
  videoEndpoint({
    model: 'google/veo-3.1',
    provider: 'google-ai-studio',
    upstreamModel: 'veo-3.1-generate-preview',
    perSecond: '0.40',
    video: { ...VEO_31, resolutions: ['720p', '1080p', '4K'], second_price_by_resolution: { '4K': '0.60' } },
  }),
  // $0.15/s (720p, 1080p), $0.35/s at 4K.
  videoEndpoint({
    model: 'google/veo-3.1-fast',
    provider: 'google-ai-studio',
    upstreamModel: 'veo-3.1-fast-generate-preview',
    perSecond: '0.15',
    video: { ...VEO_31, resolutions: ['720p', '1080p', '4K'], second_price_by_resolution: { '4K': '0.35' } },
  }),
  // $0.05/s at 720p, $0.08/s at 1080p; no 4K.
  videoEndpoint({
    model: 'google/veo-3.1-lite',
    provider: 'google-ai-studio',
    upstreamModel: 'veo-3.1-lite-generate-preview',
    perSecond: '0.05',
    video: { ...VEO_31, resolutions: ['720p', '1080p'], second_price_by_resolution: { '1080p': '0.08' } },
  }),
];
