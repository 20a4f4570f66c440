/**
 * The OpenAI Responses reply as upstream.ts reads it: the response object, its output items (checked by type;
 * unknown item and event types pass) and each typed stream event.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Count, Opt, wireCheck } from '../wire-schema.js';

const Usage = Type.Object({
  input_tokens: Count,
  output_tokens: Count,
  input_tokens_details: Opt(Type.Object({ cached_tokens: Count, cache_write_tokens: Count })),
  output_tokens_details: Opt(Type.Object({ reasoning_tokens: Count })),
});

const Texts = Opt(Type.Array(Type.Object({ text: Opt(Type.String()) })));
const ITEM_SCHEMAS: Record<string, TSchema> = {
  message: Type.Object({ content: Opt(Type.Array(Type.Object({ type: Type.String(), text: Opt(Type.String()), refusal: Opt(Type.String()) }))) }),
  reasoning: Type.Object({ summary: Texts, content: Texts, encrypted_content: Opt(Type.String()) }),
  function_call: Type.Object({ call_id: Opt(Type.String()), id: Opt(Type.String()), name: Type.String(), arguments: Opt(Type.String()), namespace: Opt(Type.String()) }),
  custom_tool_call: Type.Object({ call_id: Opt(Type.String()), id: Opt(Type.String()), name: Type.String(), input: Opt(Type.String()), namespace: Opt(Type.String()) }),
  image_generation_call: Type.Object({ id: Opt(Type.String()), status: Opt(Type.String()), result: Opt(Type.String()), output_format: Opt(Type.String()) }),
};

type Check = (value: unknown, at?: string) => unknown;
const checks = (schemas: Record<string, TSchema>, what: string): Record<string, Check> =>
  Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, wireCheck(s, what)]));

const ITEMS = checks(ITEM_SCHEMAS, 'response');
const STREAM_ITEMS = checks(ITEM_SCHEMAS, 'stream event');

const Item = Type.Object({ type: Type.String() });
const ResponseFields = {
  id: Opt(Type.String()),
  model: Opt(Type.String()),
  status: Opt(Type.String()),
  incomplete_details: Opt(Type.Object({ reason: Opt(Type.String()) })),
  usage: Opt(Usage),
  service_tier: Opt(Type.String()),
  // The hosted image tool's tokens, beside the model's (added to the IR usage).
  tool_usage: Opt(Type.Object({ image_gen: Opt(Type.Object({ input_tokens: Count, output_tokens: Count })) })),
};

const checkResponseShape = wireCheck(Type.Object({ ...ResponseFields, output: Type.Array(Item) }), 'response');

/** A non-streamed response: its fields, then each output item of a known type. */
export function checkResponse(json: unknown): void {
  const r = checkResponseShape(json);
  r.output.forEach((it, i) => ITEMS[it.type]?.(it, `output[${i}]`));
}

const OutputIndex = Opt(Type.Integer({ minimum: 0 }));
const Delta = (indexField: string) => Type.Object({ output_index: OutputIndex, [indexField]: Opt(Type.Integer({ minimum: 0 })), delta: Type.String() });
const WithItem = Type.Object({ output_index: OutputIndex, item: Item });
const WithResponse = Type.Object({ response: Type.Object({ ...ResponseFields, output: Opt(Type.Array(Item)) }) });

const EVENTS = checks(
  {
    'response.created': Type.Object({ response: Opt(Type.Object({ id: Opt(Type.String()), model: Opt(Type.String()) })) }),
    'response.output_item.added': WithItem,
    'response.output_item.done': WithItem,
    'response.output_text.delta': Delta('content_index'),
    'response.refusal.delta': Delta('content_index'),
    'response.reasoning_summary_text.delta': Delta('summary_index'),
    'response.reasoning_text.delta': Delta('content_index'),
    'response.function_call_arguments.delta': Type.Object({ output_index: OutputIndex, item_id: Opt(Type.String()), delta: Type.String() }),
    'response.custom_tool_call_input.delta': Type.Object({ output_index: OutputIndex, item_id: Opt(Type.String()), delta: Type.String() }),
    'response.image_generation_call.partial_image': Type.Object({ output_index: OutputIndex, partial_image_b64: Type.String(), partial_image_index: Type.Integer({ minimum: 0 }) }),
    'response.completed': WithResponse,
    'response.incomplete': WithResponse,
  },
  'stream event',
);

/** One stream event of a known type, with the output item or the response it carries. */
export function checkResponsesEvent(type: string, ev: Record<string, unknown>): void {
  EVENTS[type]?.(ev, type);
  if (type === 'response.output_item.added' || type === 'response.output_item.done') {
    const it = ev.item as { type: string };
    STREAM_ITEMS[it.type]?.(it, `${type}.item`);
  } else if (type === 'response.completed' || type === 'response.incomplete') {
    const output = (ev.response as { output?: Array<{ type: string }> | null }).output;
    output?.forEach((it, i) => STREAM_ITEMS[it.type]?.(it, `${type}.response.output[${i}]`));
  }
}
