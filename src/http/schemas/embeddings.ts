/**
 * The embeddings request body (`POST /embeddings`) and answer, as the hosted API's reference describes them; the same
 * schemas validate requests and document the operation in the served OpenAPI document. Unknown top-level fields are
 * accepted and passed through to the provider (as on the chat path).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from './common.js';
import { ProviderPreferencesSchema } from './inference.js';

/** At most this many inputs per request (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2048;

const TokenIds = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, description: 'Token ids of one input.' });

const MultimodalPart = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
  Type.Object({ type: Type.Literal('image_url'), image_url: Type.Object({ url: Type.String({ minLength: 1 }) }, { additionalProperties: true }) }, { additionalProperties: true }),
  Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
]);

export const EmbeddingsInput = Type.Union(
  [
    Type.String({ minLength: 1 }),
    Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
    TokenIds,
    Type.Array(TokenIds, { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
    Type.Array(Type.Object({ content: Type.Array(MultimodalPart, { minItems: 1 }) }, { additionalProperties: true }), { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
  ],
  {
    description: `Text, token ids or multimodal input(s) to embed: a string, a list of strings, a list of token ids, a list of such lists, or a list of \`{content: [parts]}\` objects; at most ${MAX_EMBEDDING_INPUTS} inputs, none empty.`,
  },
);

export const EmbeddingsBody = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'Embeddings model id, e.g. `openai/text-embedding-3-small` (GET /embeddings/models lists them).' }),
    input: EmbeddingsInput,
    dimensions: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Size of the vectors. Only endpoints that support it are used (the others are skipped); a vector of another size is never returned.' }),
    ),
    encoding_format: Type.Optional(
      StringEnum(['float', 'base64'] as const, {
        description: '`float` (default: lists of numbers) or `base64` (float32 little-endian bytes, as OpenAI). Honoured for every provider: the gateway converts when a provider cannot.',
      }),
    ),
    input_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Type of input (e.g. `search_query`, `search_document`), for providers that take one; dropped for the others.' })),
    user: Type.Optional(Type.String({ maxLength: 256, description: 'A unique identifier for the end user.' })),
    provider: Type.Optional(Nullable(ProviderPreferencesSchema)),
  },
  { additionalProperties: true },
);
export type EmbeddingsBodyT = Static<typeof EmbeddingsBody>;

export const EmbeddingsResponse = Type.Object(
  {
    id: Type.String({ description: 'The generation id (also in the X-Generation-Id header).' }),
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object({
        object: Type.Literal('embedding'),
        index: Type.Integer({ description: 'Position of the input.' }),
        embedding: Type.Union([Type.Array(Type.Number()), Type.String()], { description: 'The vector: numbers, or base64 float32 little-endian with `encoding_format: "base64"`.' }),
      }),
    ),
    model: Type.String({ description: 'The model that served the request.' }),
    provider: Type.Optional(Type.String()),
    usage: Type.Object(
      {
        prompt_tokens: Type.Integer(),
        total_tokens: Type.Integer(),
        cost: Type.Union([Type.Number(), Type.Null()], { description: 'USD; null when the endpoint has no known price.' }),
        is_byok: Type.Boolean(),
        cost_details: Type.Object({}, { additionalProperties: true }),
        estimated: Type.Optional(Type.Boolean({ description: 'Present (true) when the provider reported no token count: the tokens are estimated at 4 characters each.' })),
      },
      { additionalProperties: true },
    ),
    gateway_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);
