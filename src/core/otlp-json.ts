/**
 * Generation records as OTLP/HTTP JSON traces (the broadcast destinations' OTLP variants, docs/observability.md): one
 * span per generation with the GenAI semantic-convention attributes; its content (input and output messages) only
 * when it was logged and the destination is not in privacy mode. Pure.
 */
import { createHash } from 'node:crypto';
import type { GenerationContent } from './io-log.js';

/** What a span is made of (a GenerationRow satisfies it). */
export interface SpanSource {
  id: string;
  created_at: string;
  latency_ms: number;
  api_type: string;
  requested_model: string | null;
  model: string | null;
  provider_name: string | null;
  status: number;
  finish_reason: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  total_cost: number | null;
  streamed: boolean;
  session_id: string | null;
  workspace_id: string;
  error: { status: number; message: string } | null;
}

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: AnyValue[] } };

function value(v: string | number | boolean | string[]): AnyValue {
  if (Array.isArray(v)) return { arrayValue: { values: v.map((s) => ({ stringValue: s })) } };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}

function attributes(o: Record<string, string | number | boolean | string[] | null | undefined>) {
  return Object.entries(o)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([key, v]) => ({ key, value: value(v as string | number | boolean | string[]) }));
}

const hex = (s: string, bytes: number) => createHash('sha256').update(s).digest('hex').slice(0, bytes * 2);
const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;

/** The OTLP JSON `ExportTraceServiceRequest` of these generations. */
export function otlpTraces(
  rows: ReadonlyArray<{ row: SpanSource; content: GenerationContent | null }>,
  resource: Record<string, string>,
): Record<string, unknown> {
  const spans = rows.map(({ row, content }) => {
    const end = Date.parse(row.created_at);
    const operation = row.api_type === 'embeddings' ? 'embeddings' : row.api_type === 'completions' ? 'chat' : row.api_type;
    return {
      traceId: hex(`trace:${row.id}`, 16),
      spanId: hex(`span:${row.id}`, 8),
      name: `${operation} ${row.model ?? row.requested_model ?? ''}`.trim(),
      kind: 3,
      startTimeUnixNano: nanos(end - row.latency_ms),
      endTimeUnixNano: nanos(end),
      attributes: attributes({
        'gen_ai.operation.name': operation,
        'gen_ai.request.model': row.requested_model,
        'gen_ai.response.model': row.model,
        'gen_ai.provider.name': row.provider_name,
        'gen_ai.response.id': row.id,
        'gen_ai.response.finish_reasons': row.finish_reason ? [row.finish_reason] : null,
        'gen_ai.usage.input_tokens': row.tokens_prompt,
        'gen_ai.usage.output_tokens': row.tokens_completion,
        'gen_ai.request.stream': row.streamed,
        'gen_ai.conversation.id': row.session_id,
        'http.response.status_code': row.status,
        'gateway.cost_usd': row.total_cost,
        'gateway.workspace_id': row.workspace_id,
        'error.type': row.error ? String(row.error.status) : null,
        'gen_ai.input.messages': content ? JSON.stringify(content.input) : null,
        'gen_ai.output.messages': content ? JSON.stringify(content.output) : null,
      }),
      status: row.status >= 400 || row.error ? { code: 2, message: row.error?.message ?? '' } : { code: 1 },
    };
  });
  return { resourceSpans: [{ resource: { attributes: attributes(resource) }, scopeSpans: [{ scope: { name: 'model-gateway.broadcast' }, spans }] }] };
}
