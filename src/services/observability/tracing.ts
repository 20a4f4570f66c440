/**
 * OpenTelemetry traces (docs/observability.md), with the official SDK: a SERVER span per inference request (GenAI
 * semantic conventions: operation, request and response model, provider, usage, finish reasons), a CLIENT child span
 * per upstream attempt (status, provider, endpoint, time to first token), the incoming `traceparent` honoured and the
 * attempt's own context sent upstream. Exported over OTLP/HTTP (JSON) in batches, off the request path.
 *
 * Off (no OTEL_EXPORTER_OTLP_ENDPOINT): no Tracing object exists, so no span is ever created; every hook is a
 * `?.` on undefined.
 */
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_STREAM,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import { inputOf, outputOf, type IoCapture } from '../../core/io-log.js';
import type { GenerationRow } from '../../store/types.js';
import type { OtlpConfig } from '../../config.js';
import type { AttemptObserver, AttemptTarget } from '../attempts/runner.js';

export interface TracingOptions extends OtlpConfig {
  /** Batch delay (ms); default 1000. */
  scheduledDelayMillis?: number;
  /** Tests: an exporter instead of OTLP/HTTP. */
  exporter?: SpanExporter;
}

const propagator = new W3CTraceContextPropagator();

/** The tracer of a gateway; absent when tracing is off. */
export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(opts: TracingOptions) {
    const exporter = opts.exporter ?? new OTLPTraceExporter({ url: opts.url, headers: opts.headers });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: opts.serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: opts.scheduledDelayMillis ?? 1000, maxQueueSize: 8192, maxExportBatchSize: 512 })],
    });
    this.tracer = this.provider.getTracer('model-gateway');
  }

  /** A request's trace: its SERVER span, child of the incoming `traceparent` when there is a valid one. */
  request(headers: Record<string, string | string[] | undefined>, operation: 'chat' | 'embeddings' | 'rerank' | 'generate_content', route: string): RequestTrace {
    const parent = headers.traceparent ? propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter) : ROOT_CONTEXT;
    const span = this.tracer.startSpan(`${operation} ${route}`, { kind: SpanKind.SERVER, attributes: { [ATTR_GEN_AI_OPERATION_NAME]: operation, 'http.route': route } }, parent);
    return new RequestTrace(this.tracer, span, trace.setSpan(parent, span), operation);
  }

  /** Exports what is buffered (tests, shutdown). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

/** One request's spans: the request span, and the attempt spans under it. */
export class RequestTrace {
  private attempt: { span: Span; ctx: Context; t0: number } | null = null;
  private ended = false;
  /** The time to first token of the attempt being served, when the service knows it. */
  ttft: (() => number | null) | null = null;

  constructor(
    private readonly tracer: Tracer,
    readonly span: Span,
    private readonly ctx: Context,
    private readonly operation: string,
  ) {}

  /** The attempt observer (services/attempts/runner.ts) that makes the attempt spans. */
  observer<A extends AttemptTarget>(): AttemptObserver<A> {
    return {
      started: (a, index) => {
        const span = this.tracer.startSpan(
          `${this.operation} ${a.model}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              [ATTR_GEN_AI_OPERATION_NAME]: this.operation,
              [ATTR_GEN_AI_REQUEST_MODEL]: a.model,
              [ATTR_GEN_AI_PROVIDER_NAME]: a.provider.slug,
              [ATTR_SERVER_ADDRESS]: hostOf(a.provider.baseUrl),
              'gateway.endpoint': a.endpoint.tag,
              'gateway.attempt': index + 1,
            },
          },
          this.ctx,
        );
        this.attempt = { span, ctx: trace.setSpan(this.ctx, span), t0: performance.now() };
      },
      failed: (_a, e) => {
        const at = this.attempt;
        if (!at) return;
        const up = e as { providerCode?: number | null; type?: string };
        at.span.setAttributes({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: up.providerCode ?? e.status, [ATTR_ERROR_TYPE]: up.type ?? String(e.status) });
        at.span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
        at.span.end();
        this.attempt = null;
      },
      succeeded: () => {
        const at = this.attempt;
        if (!at) return;
        const ttftMs = this.ttft?.() ?? performance.now() - at.t0;
        at.span.setAttributes({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200, [ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK]: ttftMs / 1000, 'gateway.ttft_ms': Math.round(ttftMs) });
        at.span.setStatus({ code: SpanStatusCode.OK });
        at.span.end();
        this.attempt = null;
      },
    };
  }

  /** An upstream request's headers (left as they are) with the current attempt's `traceparent` added: a copy. */
  headers(headers: Record<string, string>): Record<string, string> {
    const out = { ...headers };
    propagator.inject(this.attempt?.ctx ?? this.ctx, out, defaultTextMapSetter);
    return out;
  }

  /** The request's outcome, from its generation record; content only when I/O logging keeps this request's. */
  record(row: GenerationRow, io: IoCapture | null | undefined): void {
    const attrs: Attributes = {
      [ATTR_GEN_AI_RESPONSE_ID]: row.id,
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: row.tokens_prompt,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: row.tokens_completion,
      [ATTR_GEN_AI_REQUEST_STREAM]: row.streamed,
      [ATTR_HTTP_RESPONSE_STATUS_CODE]: row.status,
      'gateway.api_type': row.api_type,
      'gateway.attempts': row.attempts.length,
    };
    if (row.requested_model) attrs[ATTR_GEN_AI_REQUEST_MODEL] = row.requested_model;
    if (row.model) attrs[ATTR_GEN_AI_RESPONSE_MODEL] = row.model;
    if (row.provider_name) attrs[ATTR_GEN_AI_PROVIDER_NAME] = row.provider_name;
    if (row.native_tokens_reasoning) attrs[ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = row.native_tokens_reasoning;
    if (row.finish_reason) attrs[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [row.finish_reason];
    if (row.total_cost !== null) attrs['gateway.cost_usd'] = row.total_cost;
    if (io) {
      attrs[ATTR_GEN_AI_INPUT_MESSAGES] = JSON.stringify(inputOf(io.api, io.body));
      attrs[ATTR_GEN_AI_OUTPUT_MESSAGES] = JSON.stringify(outputOf(io));
    }
    this.span.setAttributes(attrs);
    if (row.status >= 400 || row.error) {
      this.span.setAttribute(ATTR_ERROR_TYPE, String(row.error?.status ?? row.status));
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: row.error?.message });
    }
  }

  /** Ends the request span (once; an attempt span still open ends with it). */
  end(status?: number): void {
    if (this.ended) return;
    this.ended = true;
    if (this.attempt) this.attempt.span.end();
    if (status !== undefined && status >= 400) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

/** A provider's host (`server.address`), parsed once per base URL. */
const hosts = new Map<string, string>();
function hostOf(url: string): string {
  let h = hosts.get(url);
  if (h === undefined) {
    try {
      h = new URL(url).host;
    } catch {
      h = '';
    }
    if (hosts.size < 10_000) hosts.set(url, h);
  }
  return h;
}
