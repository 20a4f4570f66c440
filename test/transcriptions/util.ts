/** Transcription test harness: simulated speech-to-text providers added to the chat test catalog, and WAV files. */

/** A WAV file: 16 kHz, 16-bit mono, `seconds` long, a tone whose pitch is `seed`. */
export function wav(seconds: number, seed = 440): Buffer {
  const rate = 16000;
  const n = Math.round(seconds * rate);
  const b = Buffer.alloc(44 + n * 2);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(36 + n * 2, 4);
  b.write('WAVE', 8, 'latin1');
  b.write('fmt ', 12, 'latin1');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36, 'latin1');
  b.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * seed * i) / rate)), 44 + i * 2);
  return b;
}

export const PER_SECOND = { prompt: '0', completion: '0', audio_second: '0.0001' };
export const PER_TOKEN = { prompt: '0.0000025', audio: '0.000006', completion: '0.00001' };
export const ALL = ['language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities'];

export function transcriptionCatalog(simUrl: string) {
  const zdr = { training: false, retains_prompts: false, zdr: true };
  const provider = (slug: string, extra: Record<string, unknown> = {}) => ({ slug, name: `Sim ${slug.slice(4)}`, protocol: 'openai', base_url: `${simUrl}/${slug}/v1`, no_auth: true, data_policy: zdr, ...extra });
  const model = (id: string) => ({ id, name: id, context_length: 0, input_modalities: ['audio'], output_modalities: ['transcription'] });
  return {
    providers: [provider('sim-stt'), provider('sim-stt2'), provider('sim-stt-slow', { timeouts: { first_byte_ms: 300 } }), provider('sim-stt-nousage', { headers: { 'x-sim-stt-usage': 'none' } })],
    models: ['test/whisper', 'test/transcribe', 'test/stt-fallback', 'test/stt-slow', 'test/whisper-blind'].map(model),
    endpoints: [
      { model: 'test/whisper', provider: 'sim-stt', upstream_model: 'whisper-sim', pricing: PER_SECOND, supported_parameters: ALL },
      { model: 'test/transcribe', provider: 'sim-stt', upstream_model: 'transcribe-sim', pricing: PER_TOKEN, supported_parameters: ['language', 'prompt', 'temperature'] },
      { model: 'test/stt-fallback', provider: 'sim-stt', upstream_model: 'whisper-a', pricing: PER_SECOND, supported_parameters: ALL },
      { model: 'test/stt-fallback', provider: 'sim-stt2', upstream_model: 'whisper-b', pricing: { prompt: '0', completion: '0', audio_second: '0.0002' }, supported_parameters: ALL },
      { model: 'test/stt-slow', provider: 'sim-stt-slow', upstream_model: 'whisper-slow', pricing: PER_SECOND, supported_parameters: ALL },
      // Per second, no usage, no verbose_json: the duration is known only from a WAV header.
      { model: 'test/whisper-blind', provider: 'sim-stt-nousage', upstream_model: 'whisper-blind', pricing: PER_SECOND, supported_parameters: ['language'] },
    ],
  };
}

