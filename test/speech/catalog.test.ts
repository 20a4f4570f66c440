/**
 * Speech in the catalog: the shipped speech models and prices, the config file's speech fields (validated), and the
 * split between what chat routes and what /audio/speech routes.
 */
import { describe, expect, it } from 'vitest';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';
import { shippedFile } from '../catalog/files.js';
import { buildCatalog, CatalogError, CatalogService } from '../../src/services/catalog.js';
import { audioFormatsOf, speechCost } from '../../src/services/speech.js';

const empty = { providers: [], models: [], endpoints: [] };
const { models: DEFAULT_SPEECH_MODELS, endpoints: DEFAULT_SPEECH_ENDPOINTS } = shippedFile('speech.yaml');
const defaultCatalog = () => shippedFile('chat.yaml');

describe('shipped speech catalog', () => {
  it('ships OpenAI and Gemini TTS models with their public prices, and keeps the chat catalog apart', () => {
    const find = (id: string) => DEFAULT_SPEECH_ENDPOINTS.find((e) => e.model === id)!;
    expect(find('openai/tts-1').pricing).toEqual({ prompt: '0', completion: '0', characters: '0.000015' });
    expect(find('openai/tts-1-hd').pricing?.characters).toBe('0.00003');
    expect(find('openai/gpt-4o-mini-tts').pricing).toEqual({ prompt: '0.0000006', completion: '0.000012' });
    expect(find('openai/gpt-4o-mini-tts').supported_parameters).toContain('stream_format');
    expect(find('google/gemini-2.5-flash-preview-tts')).toMatchObject({ provider: 'google-ai-studio', speech_protocol: 'gemini-tts', audio_formats: ['pcm'], pricing: { prompt: '0.0000005', completion: '0.00001' } });
    for (const e of DEFAULT_SPEECH_ENDPOINTS) expect(e.speech_protocol, e.model).toBeDefined();
    for (const m of DEFAULT_SPEECH_MODELS) {
      expect(m.architecture.modality, m.id).toBe('text->audio');
      expect(m.supported_voices?.length, m.id).toBeGreaterThan(0);
    }
    // $15 per million characters: 1,000 characters cost $0.015.
    expect(speechCost(find('openai/tts-1').pricing, 1000, null)).toBe(0.015);
    const shipped = shippedCatalog();
    for (const m of DEFAULT_SPEECH_MODELS) expect(shipped.models.some((x) => x.id === m.id), m.id).toBe(true);
    for (const m of defaultCatalog().models) expect(shipped.models.some((x) => x.id === m.id), m.id).toBe(true);
    expect(defaultCatalog().endpoints.some((e) => e.speech_protocol)).toBe(false);
  });

  it('chat routes never see speech endpoints; the speech route sees only them', () => {
    const svc = new CatalogService(shippedCatalog(), { OPENAI_API_KEY: 'k', GEMINI_API_KEY: 'k' });
    expect(svc.route.endpointsByModel.get('openai/tts-1')).toBeUndefined();
    expect(svc.speechRoute.endpointsByModel.get('openai/tts-1')?.map((e) => e.tag)).toEqual(['openai']);
    expect(svc.speechRoute.endpointsByModel.get('openai/gpt-4o')).toBeUndefined();
    expect(svc.route.endpointsByModel.get('openai/gpt-4o')?.length).toBeGreaterThan(0);
  });
});

describe('speech fields in the config file', () => {
  const base = {
    providers: [{ slug: 'local-tts', protocol: 'openai', base_url: 'http://127.0.0.1:8880/v1', no_auth: true }],
    models: [{ id: 'local/kokoro', name: 'Kokoro', output_modalities: ['audio'], supported_voices: ['af_heart'] }],
  };

  it('parses speech_protocol, audio_formats, per-character prices and voices, with speech defaults', () => {
    const c = buildCatalog({ ...base, endpoints: [{ model: 'local/kokoro', provider: 'local-tts', speech_protocol: 'openai-tts', audio_formats: ['mp3'], pricing: { characters: '0.000001' } }] }, empty);
    const e = c.endpoints[0];
    expect(e).toMatchObject({ speech_protocol: 'openai-tts', audio_formats: ['mp3'], pricing: { prompt: '0', completion: '0', characters: '0.000001' }, supported_parameters: ['speed'] });
    expect(audioFormatsOf(e)).toEqual(['mp3']);
    expect(c.models[0].supported_voices).toEqual(['af_heart']);
    const g = buildCatalog({ ...base, endpoints: [{ model: 'local/kokoro', provider: 'local-tts', speech_protocol: 'gemini-tts', pricing: null }] }, empty).endpoints[0];
    expect(g.supported_parameters).toEqual([]);
    expect(audioFormatsOf(g)).toEqual(['pcm']);
  });

  it('reports every mistake with its path', () => {
    try {
      buildCatalog(
        {
          ...base,
          endpoints: [
            { model: 'local/kokoro', provider: 'local-tts', tag: 'local-tts/a', speech_protocol: 'elevenlabs', pricing: null },
            { model: 'local/kokoro', provider: 'local-tts', tag: 'local-tts/b', speech_protocol: 'openai-tts', audio_formats: ['wav'], pricing: null },
            { model: 'local/kokoro', provider: 'local-tts', tag: 'local-tts/c', audio_formats: ['mp3'], pricing: { prompt: '0', completion: '0' } },
            { model: 'local/kokoro', provider: 'local-tts', tag: 'local-tts/d', speech_protocol: 'openai-tts', pricing: { characters: 'cheap' } },
          ],
        },
        empty,
      );
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(CatalogError);
      const problems = (e as CatalogError).problems.join('\n');
      expect(problems).toContain('endpoints[0].speech_protocol must be one of openai-tts, gemini-tts');
      expect(problems).toContain('endpoints[1].audio_formats must be a non-empty list of mp3, pcm');
      expect(problems).toContain('endpoints[2].audio_formats needs speech_protocol');
      expect(problems).toContain('endpoints[3].pricing.characters must be a non-negative decimal string');
    }
  });
});
