/**
 * The Gemini API's bodies and answers (v1beta, REST field names), for validation and the OpenAPI document: a
 * GenerateContentRequest, a CountTokensRequest, a GenerateContentResponse, a Model and Google's error shape. Unknown
 * fields are allowed (Google adds fields often; the adapter ignores what no other protocol has).
 */
import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from './common.js';
import { ProviderPreferencesSchema } from './inference.js';

const Open = { additionalProperties: true };

const Blob = Type.Object({ mimeType: Type.String({ minLength: 1 }), data: Type.String({ description: 'Base64.' }) }, Open);
const FileData = Type.Object({ mimeType: Type.Optional(Type.String()), fileUri: Type.String({ minLength: 1 }) }, Open);

/** One part: exactly one of its data fields, plus `thought` / `thoughtSignature`. */
export const GeminiPart = Type.Object(
  {
    text: Type.Optional(Type.String()),
    thought: Type.Optional(Type.Boolean()),
    thoughtSignature: Type.Optional(Type.String({ description: 'Opaque; send it back on the part it came on.' })),
    inlineData: Type.Optional(Blob),
    fileData: Type.Optional(FileData),
    functionCall: Type.Optional(Type.Object({ id: Type.Optional(Type.String()), name: Type.String({ minLength: 1 }), args: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }, Open)),
    functionResponse: Type.Optional(
      Type.Object({ id: Type.Optional(Type.String()), name: Type.String({ minLength: 1 }), response: Type.Record(Type.String(), Type.Unknown()) }, Open),
    ),
  },
  Open,
);

export const GeminiContent = Type.Object(
  { role: Type.Optional(StringEnum(['user', 'model', 'function'] as const)), parts: Type.Array(GeminiPart) },
  Open,
);

const FunctionDeclaration = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Object({}, { ...Open, description: 'OpenAPI-subset schema (upper-case types accepted).' })),
    parametersJsonSchema: Type.Optional(Type.Object({}, { ...Open, description: 'JSON Schema of the arguments.' })),
  },
  Open,
);

const Tool = Type.Object(
  { functionDeclarations: Type.Optional(Type.Array(FunctionDeclaration)) },
  { ...Open, description: 'Function declarations. Built-in tools (googleSearch, codeExecution, urlContext, …) are refused: no other provider has them.' },
);

const ToolConfig = Type.Object(
  {
    functionCallingConfig: Type.Optional(
      Type.Object({ mode: Type.Optional(StringEnum(['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED'] as const)), allowedFunctionNames: Type.Optional(Type.Array(Type.String())) }, Open),
    ),
  },
  Open,
);

const ThinkingConfig = Type.Object(
  {
    thinkingBudget: Type.Optional(Type.Integer({ minimum: -1, description: '0 turns thinking off, -1 lets the model decide.' })),
    includeThoughts: Type.Optional(Type.Boolean()),
    thinkingLevel: Type.Optional(Type.String({ description: 'MINIMAL, LOW, MEDIUM or HIGH.' })),
  },
  Open,
);

const GenerationConfig = Type.Object(
  {
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    topK: Type.Optional(Type.Integer({ minimum: 0 })),
    candidateCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 1, description: 'Only 1.' })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    stopSequences: Type.Optional(Type.Array(Type.String(), { maxItems: 5 })),
    seed: Type.Optional(Type.Integer()),
    presencePenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    frequencyPenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    responseMimeType: Type.Optional(Type.String({ description: 'text/plain or application/json.' })),
    responseSchema: Type.Optional(Type.Object({}, { ...Open, description: 'OpenAPI-subset schema of a JSON answer.' })),
    responseJsonSchema: Type.Optional(Type.Object({}, { ...Open, description: 'JSON Schema of a JSON answer.' })),
    thinkingConfig: Type.Optional(ThinkingConfig),
    responseModalities: Type.Optional(Type.Array(Type.String(), { description: 'TEXT and IMAGE: IMAGE asks an image-output model for images, answered as inlineData parts.' })),
  },
  Open,
);

/** The gateway's own routing fields, accepted beside Google's (as on the other inference APIs). */
const GatewayFields = {
  models: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Fallback models, after the one in the path.' })),
  provider: Type.Optional(Nullable(ProviderPreferencesSchema)),
  session_id: Type.Optional(Type.String({ maxLength: 256 })),
  user: Type.Optional(Type.String({ description: 'A stable identifier of the end user.' })),
};

/** Body of `:generateContent` and `:streamGenerateContent`. */
export const GenerateContentBody = Type.Object(
  {
    contents: Type.Array(GeminiContent, { minItems: 1 }),
    systemInstruction: Type.Optional(Type.Union([GeminiContent, Type.String()])),
    tools: Type.Optional(Type.Array(Tool)),
    toolConfig: Type.Optional(ToolConfig),
    generationConfig: Type.Optional(GenerationConfig),
    safetySettings: Type.Optional(Type.Array(Type.Object({}, Open), { description: 'Accepted and ignored.' })),
    cachedContent: Type.Optional(Type.String({ description: 'Refused: Google-side caches cannot serve other providers.' })),
    ...GatewayFields,
  },
  { ...Open, $id: 'GenerateContentRequest' },
);

/** Body of `:countTokens`: `contents` (and the rest) directly, or a whole `generateContentRequest`. */
export const CountTokensBody = Type.Object(
  {
    contents: Type.Optional(Type.Array(GeminiContent)),
    generateContentRequest: Type.Optional(Type.Object({ contents: Type.Array(GeminiContent, { minItems: 1 }) }, Open)),
  },
  { ...Open, $id: 'CountTokensRequest' },
);

export const CountTokensResponse = Type.Object({ totalTokens: Type.Integer({ minimum: 0 }) }, Open);

const UsageMetadata = Type.Object(
  {
    promptTokenCount: Type.Integer(),
    candidatesTokenCount: Type.Integer(),
    totalTokenCount: Type.Integer(),
    cachedContentTokenCount: Type.Optional(Type.Integer()),
    thoughtsTokenCount: Type.Optional(Type.Integer()),
    cost: Type.Optional(Nullable(Type.Number({ description: 'USD; null when the price is unknown.' }))),
    cost_details: Type.Optional(Type.Object({}, Open)),
  },
  Open,
);

export const GenerateContentResponse = Type.Object(
  {
    candidates: Type.Array(
      Type.Object({ content: GeminiContent, finishReason: Type.Optional(Type.String()), index: Type.Optional(Type.Integer()) }, Open),
    ),
    usageMetadata: Type.Optional(UsageMetadata),
    modelVersion: Type.String({ description: 'The catalog model that served.' }),
    responseId: Type.String({ description: 'The gateway generation id.' }),
    gateway_metadata: Type.Optional(Type.Object({}, Open)),
  },
  { ...Open, description: 'One GenerateContentResponse; streamed as a sequence of them (SSE `data:` events with alt=sse, else one JSON array).' },
);

export const GeminiModel = Type.Object(
  {
    name: Type.String({ description: '`models/<gateway model id>`.' }),
    baseModelId: Type.String(),
    version: Type.String(),
    displayName: Type.String(),
    description: Type.String(),
    inputTokenLimit: Type.Integer(),
    outputTokenLimit: Type.Integer(),
    supportedGenerationMethods: Type.Array(Type.String()),
    thinking: Type.Optional(Type.Boolean()),
  },
  { ...Open, $id: 'GeminiModel' },
);

export const GeminiModelList = Type.Object({ models: Type.Array(Type.Ref('GeminiModel')), nextPageToken: Type.Optional(Type.String()) });

export const GeminiModelListQuery = Type.Object({
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Models per page (default 50).' })),
  pageToken: Type.Optional(Type.String({ description: 'The nextPageToken of the previous page.' })),
  key: Type.Optional(Type.String({ description: 'The gateway key (instead of the x-goog-api-key header).' })),
});

/** Google's error shape, used on every Gemini route. */
export const GoogleError = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Integer({ description: 'Equals the HTTP status.' }),
        message: Type.String(),
        status: Type.String({ description: 'google.rpc.Code name, e.g. INVALID_ARGUMENT, RESOURCE_EXHAUSTED.' }),
        details: Type.Optional(Type.Array(Type.Object({}, Open))),
        metadata: Type.Optional(Type.Object({}, { ...Open, description: 'The gateway’s error metadata (error_type, provider, …).' })),
      },
      Open,
    ),
    gateway_metadata: Type.Optional(Type.Object({}, Open)),
  },
  { $id: 'GoogleError' },
);

/** Responses for the given error statuses, all in Google's shape. */
export function googleErrors(...statuses: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const s of statuses) out[s] = Type.Ref('GoogleError');
  return out;
}

/** Every shared schema of the Gemini routes (registered once on the root instance). */
export const GEMINI_SHARED_SCHEMAS = [GeminiModel, GoogleError];
