/**
 * Google Gemini API wire types (`generateContent` / `streamGenerateContent`, v1beta, JSON field names as sent over
 * REST). Only the fields the adapter reads or writes are typed; see https://ai.google.dev/api/generate-content.
 */

export interface GeminiBlob {
  mimeType: string;
  /** Base64. */
  data: string;
}

export interface GeminiFileData {
  mimeType?: string;
  fileUri: string;
}

export interface GeminiFunctionCall {
  /** Set by some backends (Live API); the Developer API usually leaves it out. */
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiFunctionResponse {
  id?: string;
  name: string;
  response: Record<string, unknown>;
}

/** One part of a Content: exactly one data field, plus the `thought` flag and `thoughtSignature` metadata. */
export interface GeminiPart {
  text?: string;
  /** True for thought (summary) parts. */
  thought?: boolean;
  /** Opaque base64 signature; must be sent back on the very part it arrived on. */
  thoughtSignature?: string;
  inlineData?: GeminiBlob;
  fileData?: GeminiFileData;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

export interface GeminiContent {
  role?: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (the documented alternative to the OpenAPI-subset `parameters`). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiThinkingConfig {
  /** Tokens; 0 disables thinking, -1 lets the model decide. */
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
  /** `["TEXT", "IMAGE"]` asks an image-capable model for images (inlineData parts). */
  responseModalities?: string[];
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiUsageMetadata {
  /** Includes the cached tokens. */
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  /** Visible output only: thoughts are counted separately. */
  candidatesTokenCount?: number;
  toolUsePromptTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  finishMessage?: string;
  index?: number;
  safetyRatings?: unknown[];
}

export interface GoogleErrorBody {
  code?: number;
  message?: string;
  /** google.rpc.Code name, e.g. `RESOURCE_EXHAUSTED`. */
  status?: string;
  details?: Array<Record<string, unknown>>;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string; safetyRatings?: unknown[] };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** Only in an error event of a stream. */
  error?: GoogleErrorBody;
}

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
