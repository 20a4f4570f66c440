/**
 * Request bodies of the inference APIs (chat completions, responses, messages). Unknown fields are allowed:
 * they pass through to upstreams that speak the same protocol (new provider parameters must not be dropped).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Metadata, Nullable, PresetMetadata, StringEnum } from './common.js';

const Num = Type.Number();
const NullableNum = (opts: { minimum?: number; maximum?: number; exclusiveMinimum?: number } = {}) => Nullable(Type.Number(opts));

export const REASONING_EFFORTS = ['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none'] as const;
export const PROVIDER_SORTS = ['price', 'throughput', 'latency', 'exacto'] as const;
export const QUANTIZATIONS = ['int4', 'int8', 'fp4', 'mxfp4', 'nvfp4', 'fp6', 'fp8', 'mxfp8', 'fp16', 'bf16', 'fp32', 'unknown'] as const;

const PercentileCutoffs = Type.Object(
  { p50: Type.Optional(Nullable(Num)), p75: Type.Optional(Nullable(Num)), p90: Type.Optional(Nullable(Num)), p99: Type.Optional(Nullable(Num)) },
  { additionalProperties: false },
);
const PriceLimit = Type.Union([Type.Number({ minimum: 0 }), Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })]);

export const ProviderPreferencesSchema = Type.Object(
  {
    allow_fallbacks: Type.Optional(Nullable(Type.Boolean())),
    require_parameters: Type.Optional(Nullable(Type.Boolean())),
    data_collection: Type.Optional(Nullable(StringEnum(['deny', 'allow'] as const))),
    zdr: Type.Optional(Nullable(Type.Boolean())),
    enforce_distillable_text: Type.Optional(Nullable(Type.Boolean())),
    order: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
    only: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
    ignore: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
    quantizations: Type.Optional(Nullable(Type.Array(StringEnum(QUANTIZATIONS)))),
    sort: Type.Optional(
      Type.Union([
        StringEnum(PROVIDER_SORTS),
        Type.Object(
          { by: StringEnum(PROVIDER_SORTS), partition: Type.Optional(Nullable(StringEnum(['model', 'none'] as const))) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
    max_price: Type.Optional(
      Type.Object(
        {
          prompt: Type.Optional(PriceLimit),
          completion: Type.Optional(PriceLimit),
          request: Type.Optional(PriceLimit),
          image: Type.Optional(PriceLimit),
          audio: Type.Optional(PriceLimit),
        },
        { additionalProperties: false, description: 'USD per million tokens (prompt, completion) or per unit.' },
      ),
    ),
    preferred_min_throughput: Type.Optional(Nullable(Type.Union([Num, PercentileCutoffs]))),
    preferred_max_latency: Type.Optional(Nullable(Type.Union([Num, PercentileCutoffs]))),
    /** Provider-specific passthrough options keyed by provider slug (speech, video). */
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false, description: 'Provider routing preferences.' },
);
export type ProviderPreferencesBody = Static<typeof ProviderPreferencesSchema>;

const StopCondition = Type.Union([
  Type.Object({ type: Type.Literal('step_count_is'), step_count: Type.Integer({ minimum: 1 }) }),
  Type.Object({ type: Type.Literal('has_tool_call'), tool_name: Type.String({ minLength: 1 }) }),
  Type.Object({ type: Type.Literal('max_tokens_used'), max_tokens: Type.Integer({ minimum: 1 }) }),
  Type.Object({ type: Type.Literal('max_cost'), max_cost_in_dollars: Type.Number({ exclusiveMinimum: 0 }) }),
  Type.Object({ type: Type.Literal('finish_reason_is'), reason: Type.String({ minLength: 1 }) }),
]);

/** What a preset body adds to the inference bodies' rules (the spec's presets body): `user` at most 256 characters, metadata keys without brackets. */
export const presetLimits = {
  user: Type.Optional(Type.String({ maxLength: 256 })),
  metadata: Type.Optional(Nullable(PresetMetadata)),
};

/** Fields shared by every inference body. */
export const sharedInferenceFields = {
  model: Type.Optional(Type.String({ minLength: 1 })),
  models: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  preset: Type.Optional(Type.String({ minLength: 1 })),
  provider: Type.Optional(Nullable(ProviderPreferencesSchema)),
  route: Type.Optional(Nullable(StringEnum(['fallback', 'sort'] as const, { deprecated: true, description: 'Deprecated: use provider.sort.partition.' }))),
  session_id: Type.Optional(Type.String({ maxLength: 256 })),
  user: Type.Optional(Type.String({ description: 'A stable identifier of the end user.' })),
  metadata: Type.Optional(Nullable(Metadata)),
  cache_control: Type.Optional(Type.Object({ type: Type.String(), ttl: Type.Optional(Type.String()) })),
  debug: Type.Optional(Type.Object({ echo_upstream_body: Type.Optional(Type.Boolean()) })),
  image_config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  trace: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'trace_id, trace_name, span_name, generation_name, parent_span_id; other keys pass through.' })),
  plugins: Type.Optional(Type.Array(Type.Object({ id: Type.String({ minLength: 1 }), enabled: Type.Optional(Type.Boolean()) }))),
  stop_server_tools_when: Type.Optional(Type.Array(StopCondition, { minItems: 1 })),
  cache_enabled: Type.Optional(Type.Boolean({ description: 'Use the response cache (as the X-Gateway-Cache header; mostly set in a preset). docs/cache.md' })),
  cache_ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'With cache_enabled: seconds an answer is kept (default 300).' })),
  service_tier: Type.Optional(Nullable(StringEnum(['auto', 'default', 'flex', 'priority', 'scale', 'fast'] as const))),
  frequency_penalty: Type.Optional(NullableNum({ minimum: -2, maximum: 2 })),
  presence_penalty: Type.Optional(NullableNum({ minimum: -2, maximum: 2 })),
  temperature: Type.Optional(NullableNum({ minimum: 0, maximum: 2 })),
  top_p: Type.Optional(NullableNum({ minimum: 0, maximum: 1 })),
  top_k: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
  parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
  stream: Type.Optional(Type.Boolean({ default: false })),
};

const ReasoningObject = Type.Object({
  effort: Type.Optional(Nullable(StringEnum(REASONING_EFFORTS))),
  summary: Type.Optional(Nullable(StringEnum(['auto', 'concise', 'detailed'] as const))),
  enabled: Type.Optional(Nullable(Type.Boolean())),
  max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  exclude: Type.Optional(Nullable(Type.Boolean())),
});

const ChatMessage = Type.Object(
  {
    role: StringEnum(['system', 'developer', 'user', 'assistant', 'tool'] as const),
    content: Type.Optional(Nullable(Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true }))]))),
    name: Type.Optional(Type.String()),
    tool_call_id: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);

const ChatTool = Type.Object(
  { type: Type.String({ minLength: 1 }) },
  { additionalProperties: true, description: 'A function tool (`{type: "function", function: {name, description, parameters}}`) or a server tool the gateway runs (`{type: "gateway:web_search" | "gateway:web_fetch" | "gateway:datetime", parameters?}`; docs/server-tools.md).' },
);

/** Body of POST /chat/completions. */
export const ChatCompletionBody = Type.Object(
  {
    messages: Type.Array(ChatMessage, { minItems: 1 }),
    ...sharedInferenceFields,
    logit_bias: Type.Optional(Nullable(Type.Record(Type.String(), Type.Number()))),
    logprobs: Type.Optional(Nullable(Type.Boolean())),
    max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, deprecated: true, description: 'Deprecated: use max_completion_tokens.' }))),
    max_tool_calls: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, description: 'With server tools: the most server tool calls the gateway runs (default 30); replaced by stop_server_tools_when.' })),
    min_p: Type.Optional(NullableNum({ minimum: 0, maximum: 1 })),
    top_a: Type.Optional(NullableNum({ minimum: 0, maximum: 1 })),
    repetition_penalty: Type.Optional(NullableNum({ exclusiveMinimum: 0, maximum: 2 })),
    modalities: Type.Optional(Type.Array(StringEnum(['text', 'image', 'audio'] as const))),
    reasoning: Type.Optional(ReasoningObject),
    reasoning_effort: Type.Optional(Nullable(StringEnum(REASONING_EFFORTS))),
    response_format: Type.Optional(Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true })),
    seed: Type.Optional(Nullable(Type.Integer())),
    stop: Type.Optional(Nullable(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 })]))),
    stream_options: Type.Optional(Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }))),
    tool_choice: Type.Optional(Type.Union([StringEnum(['none', 'auto', 'required'] as const), Type.Object({ type: Type.String() }, { additionalProperties: true })])),
    tools: Type.Optional(Type.Array(ChatTool)),
    prediction: Type.Optional(Type.Object({ type: Type.String(), content: Type.Unknown() })),
  },
  { additionalProperties: true, $id: 'ChatCompletionRequest' },
);
export type ChatCompletionBodyT = Static<typeof ChatCompletionBody>;

const ResponsesInputItem = Type.Object({}, { additionalProperties: true });

/** Body of POST /responses and of POST /presets/{slug}/responses. */
export const ResponsesBody = Type.Object(
  {
    ...sharedInferenceFields,
    input: Type.Optional(Type.Union([Type.String(), Type.Array(ResponsesInputItem)])),
    instructions: Type.Optional(Nullable(Type.String())),
    background: Type.Optional(Nullable(Type.Boolean())),
    include: Type.Optional(
      Nullable(
        Type.Array(
          StringEnum([
            'file_search_call.results',
            'message.input_image.image_url',
            'computer_call_output.output.image_url',
            'reasoning.encrypted_content',
            'code_interpreter_call.outputs',
          ] as const),
        ),
      ),
    ),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    max_tool_calls: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 30 }))),
    modalities: Type.Optional(Type.Array(StringEnum(['text', 'image'] as const))),
    previous_response_id: Type.Optional(Nullable(Type.String())),
    prompt: Type.Optional(Nullable(Type.Object({ id: Type.String(), variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }))),
    prompt_cache_key: Type.Optional(Nullable(Type.String())),
    prompt_cache_options: Type.Optional(Nullable(Type.Object({ mode: Type.Optional(Type.String()), ttl: Type.Optional(Type.String()) }))),
    reasoning: Type.Optional(Nullable(ReasoningObject)),
    safety_identifier: Type.Optional(Nullable(Type.String())),
    store: Type.Optional(Type.Boolean({ default: false })),
    text: Type.Optional(Type.Object({ format: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true })), verbosity: Type.Optional(Nullable(Type.String())) })),
    tool_choice: Type.Optional(Type.Union([StringEnum(['auto', 'none', 'required'] as const), Type.Object({ type: Type.String() }, { additionalProperties: true })])),
    tools: Type.Optional(
      Type.Array(
        Type.Object(
          {
            type: Type.String({ minLength: 1 }),
            name: Type.Optional(Type.String({ minLength: 1 })),
            description: Type.Optional(Nullable(Type.String())),
            parameters: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
          },
          { additionalProperties: true },
        ),
      ),
    ),
    truncation: Type.Optional(Nullable(StringEnum(['auto', 'disabled'] as const))),
  },
  { additionalProperties: true, $id: 'ResponsesRequest' },
);
export type ResponsesBodyT = Static<typeof ResponsesBody>;

/** Body of POST /messages (Anthropic Messages shape) and of POST /presets/{slug}/messages. */
export const MessagesBody = Type.Object(
  {
    ...sharedInferenceFields,
    temperature: Type.Optional(NullableNum({ minimum: 0, maximum: 1 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    messages: Type.Optional(Type.Array(Type.Object({ role: StringEnum(['user', 'assistant', 'system'] as const, { description: 'system: a mid-conversation system turn (docs/agents.md)' }), content: Type.Unknown() }, { additionalProperties: true }))),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String(), text: Type.Optional(Type.String()) }, { additionalProperties: true }))])),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    tool_choice: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    thinking: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    fallbacks: Type.Optional(Type.Array(Type.Object({ model: Type.String({ minLength: 1 }) }, { additionalProperties: false }), { maxItems: 3 })),
  },
  { additionalProperties: true, $id: 'MessagesRequest' },
);
export type MessagesBodyT = Static<typeof MessagesBody>;
