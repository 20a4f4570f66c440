/**
 * The Anthropic Messages reply as response.ts and stream.ts read it: the message, its content blocks (checked by
 * type; unknown block and event types pass, as the API asks clients to ignore them) and each stream event.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Count, Opt, wireCheck } from '../wire-schema.js';

const Usage = Type.Object({
  input_tokens: Count,
  output_tokens: Count,
  cache_creation_input_tokens: Count,
  cache_read_input_tokens: Count,
  service_tier: Opt(Type.String()),
});

const text = Type.Object({ text: Type.String() });
const thinking = Type.Object({ thinking: Opt(Type.String()), signature: Opt(Type.String()) });
const redacted = Type.Object({ data: Opt(Type.String()) });
const toolUse = Type.Object({ id: Type.String(), name: Type.String(), input: Type.Optional(Type.Unknown()) });

type Check = (value: unknown, at?: string) => unknown;
const checks = (schemas: Record<string, TSchema>, what: string): Record<string, Check> =>
  Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, wireCheck(s, what)]));

/** Content blocks of a message (response) or of `content_block_start`, by type. */
const BLOCKS = checks({ text, thinking, redacted_thinking: redacted, tool_use: toolUse }, 'response');
const STREAM_BLOCKS = checks({ text: Type.Object({ text: Opt(Type.String()) }), thinking, redacted_thinking: redacted, tool_use: toolUse }, 'stream event');

const checkMessageShape = wireCheck(
  Type.Object({
    id: Opt(Type.String()),
    model: Opt(Type.String()),
    content: Type.Array(Type.Object({ type: Type.String() })),
    stop_reason: Opt(Type.String()),
    usage: Opt(Usage),
  }),
  'response',
);

/** A non-streamed message: its envelope, then each block of a known type. */
export function checkMessage(json: unknown): void {
  const msg = checkMessageShape(json);
  msg.content.forEach((b, i) => BLOCKS[b.type]?.(b, `content[${i}]`));
}

const Index = Type.Integer({ minimum: 0 });
const DELTAS = checks(
  {
    text_delta: Type.Object({ text: Type.String() }),
    thinking_delta: Type.Object({ thinking: Type.String() }),
    signature_delta: Type.Object({ signature: Type.String() }),
    input_json_delta: Type.Object({ partial_json: Type.String() }),
  },
  'stream event',
);

const EVENTS = checks(
  {
    message_start: Type.Object({ message: Type.Object({ id: Opt(Type.String()), model: Opt(Type.String()), usage: Opt(Usage) }) }),
    content_block_start: Type.Object({ index: Index, content_block: Type.Object({ type: Type.String() }) }),
    content_block_delta: Type.Object({ index: Index, delta: Type.Object({ type: Type.String() }) }),
    content_block_stop: Type.Object({ index: Index }),
    message_delta: Type.Object({ delta: Opt(Type.Object({ stop_reason: Opt(Type.String()) })), usage: Opt(Usage) }),
  },
  'stream event',
);

/** One stream event of a known type (`type` already read), with its block or delta. */
export function checkStreamEvent(type: string, json: Record<string, unknown>): void {
  EVENTS[type]?.(json, type);
  if (type === 'content_block_start') {
    const b = json.content_block as { type: string };
    STREAM_BLOCKS[b.type]?.(b, `${type}.content_block`);
  } else if (type === 'content_block_delta') {
    const d = json.delta as { type: string };
    DELTAS[d.type]?.(d, `${type}.delta`);
  }
}
