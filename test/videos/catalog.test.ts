/** The shipped video catalog, video sections of the config file, prices and dimensions. */
import { describe, expect, it } from 'vitest';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';
import { shippedFile } from '../catalog/files.js';
import { buildCatalog, CatalogError, CatalogService, videoProtocolOf } from '../../src/services/catalog.js';
import { describeSize, effectiveDims, sizeFor, videoCost, videoModelView } from '../../src/services/videos.js';

const empty = { providers: [], models: [], endpoints: [] };
const { models: DEFAULT_VIDEO_MODELS, endpoints: DEFAULT_VIDEO_ENDPOINTS } = shippedFile('video.yaml');
const defaultCatalog = () => shippedFile('chat.yaml');

describe('shipped video catalog', () => {
  it('ships Google Veo 3.1 models with public per-second prices, apart from the chat catalog', () => {
    expect(DEFAULT_VIDEO_MODELS.map((m) => m.id)).toEqual(['google/veo-3.1', 'google/veo-3.1-fast', 'google/veo-3.1-lite']);
    for (const m of DEFAULT_VIDEO_MODELS) {
      expect(m.architecture.output_modalities).toEqual(['video']);
      expect(m.description).toMatch(/^\S[^\n]*\.$/);
    }
    const price = (id: string) => DEFAULT_VIDEO_ENDPOINTS.find((e) => e.model === id)!;
    expect(price('google/veo-3.1').pricing).toEqual({ prompt: '0', completion: '0', video_second: '0.40' });
    expect(price('google/veo-3.1').video?.second_price_by_resolution).toEqual({ '4K': '0.60' });
    expect(price('google/veo-3.1-fast').pricing?.video_second).toBe('0.15');
    expect(price('google/veo-3.1-lite').video?.second_price_by_resolution).toEqual({ '1080p': '0.08' });
    for (const e of DEFAULT_VIDEO_ENDPOINTS) {
      expect(e.provider).toBe('google-ai-studio');
      expect(e.video?.protocol).toBe('google-veo');
      expect(e.upstreamModel).toMatch(/^veo-3\.1-(fast-|lite-)?generate-preview$/);
    }
    expect(defaultCatalog().endpoints.some((e) => e.video)).toBe(false);
    const shipped = shippedCatalog();
    for (const m of DEFAULT_VIDEO_MODELS) expect(shipped.models.some((x) => x.id === m.id)).toBe(true);
  });

  it('routes video endpoints for POST /videos only', () => {
    const svc = new CatalogService(shippedCatalog(), { GEMINI_API_KEY: 'k' });
    expect(svc.route.endpointsByModel.get('google/veo-3.1-fast')).toBeUndefined();
    expect(svc.videoRoute.endpointsByModel.get('google/veo-3.1-fast')?.map((e) => e.tag)).toEqual(['google-ai-studio']);
    expect(svc.videoRoute.endpointsByModel.get('openai/gpt-4o')).toBeUndefined();
    const veo = svc.videoRoute.endpointsByModel.get('google/veo-3.1-fast')![0];
    expect(svc.isRouted(veo)).toBe(true);
  });

  it('prices a job exactly: per second of the output resolution', () => {
    const ep = (id: string) => DEFAULT_VIDEO_ENDPOINTS.find((e) => e.model === id)!;
    expect(videoCost(ep('google/veo-3.1'), 8, '720p')).toBe(3.2);
    expect(videoCost(ep('google/veo-3.1'), 8, '4K')).toBe(4.8);
    expect(videoCost(ep('google/veo-3.1-fast'), 6, null)).toBe(0.9);
    expect(videoCost(ep('google/veo-3.1-lite'), 8, '1080p')).toBe(0.64);
    expect(videoCost(ep('google/veo-3.1-lite'), 4, '720p')).toBe(0.2);
    expect(videoCost(ep('google/veo-3.1'), null, '720p')).toBeNull();
    expect(videoCost({ ...ep('google/veo-3.1'), pricing: null }, 8, '720p')).toBeNull();
    expect(videoCost({ ...ep('google/veo-3.1'), pricing: { prompt: '0', completion: '0', video: '0.5', discount: 0.2 }, video: undefined }, 8, null)).toBe(0.4);
    expect(videoCost({ ...ep('google/veo-3.1'), pricing: { prompt: '0', completion: '0', video: '0.5', video_second: '0.1' } }, 8, '720p')).toBe(1.3);
  });

  it('lists a model with the union of its endpoints', () => {
    const m = DEFAULT_VIDEO_MODELS[0];
    const view = videoModelView(m, DEFAULT_VIDEO_ENDPOINTS.filter((e) => e.model === m.id));
    expect(view).toMatchObject({
      id: 'google/veo-3.1',
      supported_resolutions: ['720p', '1080p', '4K'],
      supported_aspect_ratios: ['16:9', '9:16'],
      supported_sizes: null,
      supported_durations: [4, 6, 8],
      supported_frame_images: ['first_frame', 'last_frame'],
      generate_audio: true,
      seed: true,
      pricing_skus: { video_second: '0.40', video_second_4K: '0.60' },
      creativity: null,
      upscale_factor: null,
    });
  });
});

describe('video sections in the config file', () => {
  const base = {
    providers: [
      { slug: 'acme', protocol: 'openai', base_url: 'https://video.acme.test/v1', no_auth: true },
      { slug: 'claude-ish', protocol: 'anthropic', base_url: 'https://a.test/v1', no_auth: true },
    ],
    models: [{ id: 'acme/video-1', name: 'Acme Video', output_modalities: ['video'] }],
  };

  it('parses capabilities and video prices, with defaults and the protocol derived from the provider', () => {
    const c = buildCatalog(
      {
        ...base,
        endpoints: [
          { model: 'acme/video-1', provider: 'acme', pricing: { video_second: '0.12' }, video: { resolutions: ['720p'], durations: [4, 8], frame_images: ['first_frame'], default_duration: 4, second_price_by_resolution: { '1080p': '0.2' } } },
        ],
      },
      empty,
    );
    const e = c.endpoints[0];
    expect(e.pricing).toEqual({ prompt: '0', completion: '0', video_second: '0.12' });
    expect(e.video).toEqual({
      resolutions: ['720p'],
      aspect_ratios: null,
      sizes: null,
      durations: [4, 8],
      frame_images: ['first_frame'],
      generate_audio: null,
      seed: null,
      allowed_passthrough_parameters: [],
      default_duration: 4,
      second_price_by_resolution: { '1080p': '0.2' },
    });
    expect(e.supported_parameters).toContain('duration');
    expect(videoProtocolOf(e, c.providers.find((p) => p.slug === 'acme'))).toBe('openai-video');
  });

  it('reports every mistake with its path', () => {
    let err: CatalogError | null = null;
    try {
      buildCatalog(
        {
          ...base,
          endpoints: [
            { model: 'acme/video-1', provider: 'acme', pricing: { video_second: 'cheap' }, video: { durations: [0], protocol: 'sora', frame_images: ['middle'] } },
            { model: 'acme/video-1', provider: 'claude-ish', pricing: { video: '1' }, video: { resolutions: 'all' } },
          ],
        },
        empty,
      );
    } catch (e) {
      err = e as CatalogError;
    }
    expect(err).toBeInstanceOf(CatalogError);
    const text = err!.problems.join('\n');
    expect(text).toMatch(/endpoints\[0\]\.pricing\.video_second must be a non-negative decimal/);
    expect(text).toMatch(/endpoints\[0\]\.video\.durations must be a list of positive integers/);
    expect(text).toMatch(/endpoints\[0\]\.video\.protocol must be one of openai-video, google-veo/);
    expect(text).toMatch(/endpoints\[0\]\.video\.frame_images must be a list of first_frame, last_frame/);
    expect(text).toMatch(/endpoints\[1\]\.video\.resolutions must be a list of strings/);
    expect(text).toMatch(/endpoints\[1\]\.video\.protocol must be set/);
  });
});

describe('video dimensions', () => {
  it('derives size from resolution and aspect ratio, and back', () => {
    expect(sizeFor('720p', '16:9')).toBe('1280x720');
    expect(sizeFor('720p', '9:16')).toBe('720x1280');
    expect(sizeFor('1080p', '16:9')).toBe('1920x1080');
    expect(sizeFor('480p', '1:1')).toBe('480x480');
    expect(sizeFor('4K', '16:9')).toBe('3840x2160');
    expect(sizeFor('720p', '5:4')).toBeNull();
    expect(describeSize('1280x720')).toEqual({ resolution: '720p', aspect_ratio: '16:9' });
    expect(describeSize('1024x1792')).toEqual({ resolution: '1K', aspect_ratio: '9:16' });
    expect(describeSize('3840x2160')).toEqual({ resolution: '4K', aspect_ratio: '16:9' });
    expect(describeSize('1000x333')).toEqual({ resolution: null, aspect_ratio: null });
    expect(effectiveDims({ size: null, resolution: '1080p', aspect_ratio: '9:16' })).toEqual({ size: '1080x1920', resolution: '1080p', aspect_ratio: '9:16' });
    expect(effectiveDims({ size: '1280x720', resolution: null, aspect_ratio: null })).toEqual({ size: '1280x720', resolution: '720p', aspect_ratio: '16:9' });
    expect(effectiveDims({ size: null, resolution: '720p', aspect_ratio: null })).toEqual({ size: null, resolution: '720p', aspect_ratio: null });
  });
});
