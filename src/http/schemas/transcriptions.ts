/**
 * The transcription request (`POST /audio/transcriptions`) in its two forms — JSON with base64 `input_audio`, or an
 * OpenAI-style multipart upload with a `file` part — and the answer. The same schemas validate and document.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from './common.js';
import { ProviderPreferencesSchema } from './inference.js';

/** Largest audio accepted (OpenAI's limit): 25 MiB decoded. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** Audio formats a file or `input_audio.format` may name, and their media types. */
export const AUDIO_MIME: Record<string, string> = {
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  mp4: 'audio/mp4',
  mpeg: 'audio/mpeg',
  mpga: 'audio/mpeg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  webm: 'audio/webm',
};
export const AUDIO_FORMATS = Object.keys(AUDIO_MIME);

const common = {
  model: Type.String({ minLength: 1, description: 'Transcription model id, e.g. `openai/whisper-1` or `openai/gpt-4o-transcribe`.' }),
  language: Type.Optional(Type.String({ pattern: '^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})?$', description: 'ISO-639-1 language of the audio (e.g. `en`); detected when absent.' })),
  prompt: Type.Optional(Type.String({ maxLength: 4096, description: 'Text to guide the style or continue a previous segment.' })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Sampling temperature, 0 to 1.' })),
  response_format: Type.Optional(
    StringEnum(['json', 'verbose_json', 'text', 'srt', 'vtt'] as const, {
      description:
        '`json` (default): `{text, usage}`; `verbose_json` adds task, language, duration, segments (and words with `timestamp_granularities: ["word"]`); `text`: the text alone, as text/plain; `srt` and `vtt`: subtitles (SubRip, WebVTT) timed by segment. `verbose_json`, `srt` and `vtt` are served only by endpoints that can answer verbose_json.',
    }),
  ),
  timestamp_granularities: Type.Optional(Type.Array(StringEnum(['word', 'segment'] as const), { maxItems: 2, description: 'With `verbose_json`: `segment` and/or `word` timestamps (`srt` and `vtt` are always timed by segment).' })),
};

export const TranscriptionJsonBody = Type.Object(
  {
    ...common,
    input_audio: Type.Object(
      {
        data: Type.String({ minLength: 1, description: 'The audio, base64 (or a `data:audio/…;base64,` URL).' }),
        format: StringEnum(AUDIO_FORMATS as [string, ...string[]], { description: 'The audio format.' }),
      },
      { additionalProperties: false },
    ),
    provider: Type.Optional(Nullable(ProviderPreferencesSchema)),
  },
  { additionalProperties: true },
);
export type TranscriptionJsonBodyT = Static<typeof TranscriptionJsonBody>;

/** The multipart form as the route's parser hands it over (`file` read into memory, numbers parsed). */
export const TranscriptionMultipartBody = Type.Object(
  {
    ...common,
    file: Type.Object({}, { additionalProperties: true, description: 'The audio file (binary; at most 25 MiB). Its extension or part Content-Type names the format.' }),
    provider: Type.Optional(Nullable(ProviderPreferencesSchema, { description: 'Routing preferences as a JSON text field.' })),
  },
  { additionalProperties: true },
);

export const TranscriptionResponse = Type.Object(
  {
    text: Type.String(),
    task: Type.Optional(Type.String()),
    language: Type.Optional(Type.String()),
    duration: Type.Optional(Type.Number()),
    segments: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    words: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    usage: Type.Object(
      {
        seconds: Type.Optional(Type.Number({ description: 'Seconds of input audio, when known.' })),
        input_tokens: Type.Integer(),
        output_tokens: Type.Integer(),
        total_tokens: Type.Integer(),
        cost: Type.Union([Type.Number(), Type.Null()], { description: 'USD; null when the price is unknown or cannot be computed (a per-second price without a known duration).' }),
        is_byok: Type.Boolean(),
      },
      { additionalProperties: true },
    ),
    gateway_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);
