/**
 * Transcription (speech-to-text) models and endpoints the gateway ships (POST /audio/transcriptions;
 * docs/transcriptions.md); `shippedCatalog()` adds them.
 *
 * - A model is a transcription model when its `output_modalities` include `transcription`; its endpoints are routed by
 *   the transcription service only, over OpenAI's `/audio/transcriptions` protocol.
 * - Prices: `audio` USD per audio input token, `prompt` per text prompt token, `completion` per output token, or
 *   `audio_second` USD per second of input audio.
 * - `response_format` (verbose_json, timestamps) only where the model offers it (whisper-1; the gpt-4o transcribe
 *   models answer json only).
 *
 * Sources (checked 2026-11): developers.openai.com/api/docs/pricing (transcription: whisper-1 $0.006 per minute;
 * gpt-4o-transcribe $2.50 text input, $6.00 audio input, $10.00 output per million tokens; gpt-4o-mini-transcribe
 * $1.25, $3.00, $5.00) and /api-reference/audio/createTranscription (parameters per model).
 *
 * Pure data; no I/O.
 */
import type { EndpointDef, ModelDef, Pricing } from '../core/catalog-types.js';
import { apiModel, unixDay as unix } from './model-defaults.js';

function sttModel(m: Pick<ModelDef, 'id' | 'name' | 'created' | 'description'>): ModelDef {
  return apiModel({ ...m, context_length: 0 }, { input: ['audio'], output: ['transcription'], tokenizer: 'GPT' });
}

function sttEndpoint(e: { model: string; upstreamModel: string; pricing: Pricing; params: string[] }): EndpointDef {
  return {
    model: e.model,
    provider: 'openai',
    tag: 'openai',
    upstreamModel: e.upstreamModel,
    pricing: e.pricing,
    context_length: 0,
    max_prompt_tokens: null,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: e.params,
    is_moderated: false,
    supports_implicit_caching: false,
  };
}

export const DEFAULT_TRANSCRIPTION_MODELS: ModelDef[] = [
  sttModel({ id: 'openai/whisper-1', name: 'OpenAI: Whisper', created: unix('2023-03-01'), description: 'OpenAI Whisper speech recognition: verbose_json with segment and word timestamps; billed per second of audio.' }),
  sttModel({ id: 'openai/gpt-4o-transcribe', name: 'OpenAI: GPT-4o Transcribe', created: unix('2025-03-20'), description: 'Speech to text with GPT-4o: billed per audio and text token.' }),
  sttModel({ id: 'openai/gpt-4o-mini-transcribe', name: 'OpenAI: GPT-4o mini Transcribe', created: unix('2025-03-20'), description: 'Speech to text with GPT-4o mini: billed per audio and text token.' }),
];

export const DEFAULT_TRANSCRIPTION_ENDPOINTS: EndpointDef[] = [
  sttEndpoint({ model: 'openai/whisper-1', upstreamModel: 'whisper-1', pricing: { prompt: '0', completion: '0', audio_second: '0.0001' }, params: ['language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities'] }),
  sttEndpoint({ model: 'openai/gpt-4o-transcribe', upstreamModel: 'gpt-4o-transcribe', pricing: { prompt: '0.0000025', audio: '0.000006', completion: '0.00001' }, params: ['language', 'prompt', 'temperature'] }),
  sttEndpoint({ model: 'openai/gpt-4o-mini-transcribe', upstreamModel: 'gpt-4o-mini-transcribe', pricing: { prompt: '0.00000125', audio: '0.000003', completion: '0.000005' }, params: ['language', 'prompt', 'temperature'] }),
];
