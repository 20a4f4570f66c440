/**
 * The OpenAI chat completions reply as the parser reads it (ir-upstream.ts): a completion body and a stream chunk.
 * Only the fields read, with the types relied on; unknown fields pass. Compatible servers vary, so `content` may be
 * a string or an array of parts, ids may be null, tool-call arguments any JSON.
 */
import { Type } from '@sinclair/typebox';
import { Count, Opt, wireCheck } from '../wire-schema.js';

export const OpenAIUsageSchema = Type.Object({
  prompt_tokens: Count,
  completion_tokens: Count,
  cache_creation_input_tokens: Count,
  prompt_tokens_details: Opt(Type.Object({ cached_tokens: Count, cache_write_tokens: Count })),
  completion_tokens_details: Opt(Type.Object({ reasoning_tokens: Count })),
});

const ReasoningDetail = Type.Object({
  type: Opt(Type.String()),
  text: Opt(Type.String()),
  summary: Opt(Type.String()),
  signature: Opt(Type.String()),
  index: Opt(Type.Number()),
});

const Content = Opt(Type.Union([Type.String(), Type.Array(Type.Unknown())]));

const FunctionCall = Type.Object({ name: Opt(Type.String()), arguments: Type.Optional(Type.Unknown()) });
const ToolCall = Type.Object({ id: Opt(Type.String()), index: Opt(Type.Number()), function: Opt(FunctionCall) });

/** What a message (or a stream delta) may carry. */
const MessageFields = {
  content: Content,
  reasoning: Opt(Type.String()),
  reasoning_content: Opt(Type.String()),
  reasoning_details: Opt(Type.Array(ReasoningDetail)),
  refusal: Opt(Type.String()),
  tool_calls: Opt(Type.Array(ToolCall)),
  function_call: Opt(FunctionCall),
};

const Envelope = {
  id: Opt(Type.String()),
  model: Opt(Type.String()),
  usage: Opt(OpenAIUsageSchema),
};

export const checkChatResponse = wireCheck(
  Type.Object({
    ...Envelope,
    choices: Type.Array(Type.Object({ index: Opt(Type.Number()), message: Opt(Type.Object(MessageFields)), finish_reason: Opt(Type.String()) })),
    service_tier: Opt(Type.String()),
    system_fingerprint: Opt(Type.String()),
  }),
  'response',
);

export const checkChatChunk = wireCheck(
  Type.Object({
    ...Envelope,
    choices: Opt(Type.Array(Type.Object({ index: Opt(Type.Number()), delta: Opt(Type.Object(MessageFields)), finish_reason: Opt(Type.String()) }))),
  }),
  'stream event',
);

/** An embeddings answer (embeddings.ts): one item per input, a vector of numbers or OpenAI's base64 form. */
export const checkEmbeddingsResponse = wireCheck(
  Type.Object({
    id: Opt(Type.String()),
    data: Type.Array(Type.Object({ index: Opt(Type.Integer()), embedding: Type.Union([Type.Array(Type.Number()), Type.String()]) })),
    usage: Opt(Type.Object({ prompt_tokens: Count, total_tokens: Count })),
  }),
  'response',
);

/** A transcription answer (transcriptions.ts): the text, and the usage or duration it is billed by. */
export const checkTranscription = wireCheck(
  Type.Object({
    text: Type.String(),
    duration: Opt(Type.Number()),
    usage: Opt(Type.Object({ input_tokens: Count, output_tokens: Count, seconds: Count, input_token_details: Opt(Type.Object({ audio_tokens: Count, text_tokens: Count })) })),
  }),
  'response',
);
