/**
 * The Gemini `GenerateContentResponse` as response.ts and stream.ts read it (the same shape for a whole answer and
 * for each stream chunk): the first candidate's parts and finish reason, the prompt feedback, the usage counts.
 */
import { Type } from '@sinclair/typebox';
import { Count, Opt, wireCheck } from '../wire-schema.js';

const Part = Type.Object({
  text: Opt(Type.String()),
  thought: Opt(Type.Boolean()),
  thoughtSignature: Opt(Type.String()),
  functionCall: Opt(Type.Object({ id: Opt(Type.String()), name: Type.String(), args: Opt(Type.Object({})) })),
});

const GenerateContentResponse = Type.Object({
  candidates: Opt(
    Type.Array(
      Type.Object({
        content: Opt(Type.Object({ parts: Opt(Type.Array(Part)) })),
        finishReason: Opt(Type.String()),
      }),
    ),
  ),
  promptFeedback: Opt(Type.Object({ blockReason: Opt(Type.String()) })),
  usageMetadata: Opt(
    Type.Object({
      promptTokenCount: Count,
      candidatesTokenCount: Count,
      thoughtsTokenCount: Count,
      toolUsePromptTokenCount: Count,
      cachedContentTokenCount: Count,
    }),
  ),
  modelVersion: Opt(Type.String()),
  responseId: Opt(Type.String()),
});

export const checkGeminiResponse = wireCheck(GenerateContentResponse, 'response');
export const checkGeminiChunk = wireCheck(GenerateContentResponse, 'stream event');
