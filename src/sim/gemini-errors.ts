/** The Gemini simulator's error replies (gemini.ts describes the protocol), and the helpers both files share. */
import type { OutgoingHttpHeaders } from 'node:http';
import type { EndpointContext, ErrorInfo, JsonReply, Protocol } from './protocol.js';

export const DEFAULT_MODEL = 'gemini-sim';
export const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json; charset=UTF-8' };

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);

export const PATH = /^\/v1beta\/models\/([^/:]+)(?::|%3A)(generateContent|streamGenerateContent)$/i;

// ---------------------------------------------------------------- errors

const STATUS_NAME: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function pathModel(path: string | undefined): string | undefined {
  const m = path ? PATH.exec(path) : null;
  return m ? decodeURIComponent(m[1]) : undefined;
}

function modelOf(ctx: Partial<EndpointContext>): string {
  return ctx.knobs?.model ?? pathModel(ctx.path) ?? DEFAULT_MODEL;
}

function defaultMessage(status: number, model: string): string {
  switch (status) {
    case 400:
      return 'Request contains an invalid argument.';
    case 401:
      return 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.';
    case 403:
      return 'The caller does not have permission';
    case 404:
      return `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`;
    case 429:
      return 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';
    case 500:
      return 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting';
    case 503:
      return 'The model is overloaded. Please try again later.';
    case 504:
      return 'Deadline expired before operation could complete.';
    default:
      return `Simulated error (HTTP ${status}).`;
  }
}

function errorReply(status: number, message: string, statusName: string, details: Obj[] | undefined, ctx: Partial<EndpointContext>): JsonReply {
  const headers: OutgoingHttpHeaders = { ...JSON_HEADERS };
  const retryAfter = ctx.knobs?.retryAfter;
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  const error: Obj = { code: status, message, status: statusName };
  if (details) error.details = details;
  return { kind: 'json', status, body: JSON.stringify({ error }), headers };
}

export const geminiProtocol: Protocol = {
  name: 'gemini',
  error(status, ctx, info?: ErrorInfo) {
    if (info?.code === 'invalid_api_key') {
      const h = ctx.headers ?? {};
      if (h['x-goog-api-key'] || h.authorization || h['x-api-key']) {
        const message = 'API key not valid. Please pass a valid API key.';
        return errorReply(400, message, 'INVALID_ARGUMENT', [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
          { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
        ], ctx);
      }
      const message =
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
      return errorReply(403, message, 'PERMISSION_DENIED', undefined, ctx);
    }
    const model = modelOf(ctx);
    const message = info?.message ?? defaultMessage(status, model);
    let details: Obj[] | undefined;
    if (status === 429) {
      details = [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_paid_tier_requests',
              quotaId: 'GenerateRequestsPerMinutePerProjectPerModel',
              quotaDimensions: { location: 'global', model },
            },
          ],
        },
        { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${ctx.knobs?.retryAfter ?? 1}s` },
      ];
    }
    return errorReply(status, message, STATUS_NAME[status] ?? (status < 500 ? 'FAILED_PRECONDITION' : 'UNKNOWN'), details, ctx);
  },
  streamError() {
    return { data: JSON.stringify({ error: { code: 500, message: defaultMessage(500, ''), status: 'INTERNAL' } }) };
  },
};
