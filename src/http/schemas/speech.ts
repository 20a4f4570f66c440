/**
 * The speech request body (`POST /audio/speech`): the spec's fields, validated here; the same schema documents the
 * operation in the served OpenAPI document. Unknown top-level fields are accepted and ignored (SDKs send fields such
 * as `stream_format`); provider-specific fields go in `provider.options.<provider slug>`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from './common.js';
import { ProviderPreferencesSchema } from './inference.js';

export const SPEECH_FORMATS = ['mp3', 'pcm'] as const;

/** Provider options: keyed by provider slug (or endpoint tag); only the matched provider's are forwarded. */
export const SpeechProviderOptions = Type.Record(Type.String(), Nullable(Type.Object({}, { additionalProperties: true })), {
  description:
    'Provider-specific options keyed by provider slug (e.g. `{"openai": {"instructions": "Speak calmly"}}`). Only the options of the provider that serves the request are forwarded, as extra fields of its request (they never replace model, input, voice or format); other keys are ignored; null values mean unset.',
});

export const SpeechBody = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'Text-to-speech model id, e.g. `openai/gpt-4o-mini-tts`.' }),
    input: Type.String({ minLength: 1, description: 'Text to synthesize.' }),
    voice: Type.String({ minLength: 1, description: 'Voice identifier (provider-specific), e.g. `alloy` (OpenAI) or `Kore` (Gemini).' }),
    response_format: Type.Optional(
      StringEnum(SPEECH_FORMATS, {
        default: 'pcm',
        description: '`mp3` (audio/mpeg) or `pcm` (audio/pcm: raw signed 16-bit little-endian samples, mono, 24 kHz). Default `pcm`.',
      }),
    ),
    speed: Type.Optional(
      Type.Number({ minimum: 0.25, maximum: 4, description: 'Playback speed multiplier (0.25 to 4). Used by models that support it (OpenAI), ignored by the others.' }),
    ),
    provider: Type.Optional(
      Nullable(
        Type.Object(
          { ...ProviderPreferencesSchema.properties, options: Type.Optional(SpeechProviderOptions) },
          { additionalProperties: false, description: 'Provider routing preferences (as for chat) and provider-specific `options`.' },
        ),
      ),
    ),
  },
  { additionalProperties: true, description: 'Text-to-speech request.' },
);
export type SpeechBodyT = Static<typeof SpeechBody>;
