/**
 * Azure OpenAI's data plane (https://learn.microsoft.com/azure/ai-services/openai/reference): OpenAI's bodies on
 * Azure's URL shape and errors.
 *
 *   POST /openai/deployments/{deployment}/chat/completions?api-version=…
 *   POST /openai/deployments/{deployment}/embeddings?api-version=…
 *   POST /openai/deployments/{deployment}/images/generations?api-version=…   (each image with Azure's filter results)
 *   POST /openai/deployments/{deployment}/audio/speech?api-version=…
 *   POST /openai/responses?api-version=…              (deployment = body `model`)
 *   POST /openai/v1/chat/completions, /openai/v1/responses, /openai/v1/embeddings   (the v1 API, no api-version)
 *
 * A request needs `api-version` (except on /openai/v1) and a credential (`api-key`, or `Authorization: Bearer` for an
 * Entra ID token): else Azure's 404 / 401 bodies. The `models` knob lists the deployments that exist (others: 404
 * `DeploymentNotFound`). Answers carry Azure's `prompt_filter_results` / `content_filter_results`; a stream starts with
 * Azure's empty-choices chunk of prompt filter results.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { embeddings } from './embeddings.js';
import { chatCompletions } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Protocol, Reply } from './protocol.js';
import { createResponse } from './responses.js';
import { openaiImageGenerations } from './images.js';
import { openaiSpeech } from './tts.js';

const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json' };
const FILTERS = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function azureMessage(status: number, ctx: Partial<EndpointContext>): { code: string; message: string } {
  const path = ctx.path ?? '';
  const op = path.endsWith('/embeddings') ? 'Embeddings_Create' : path.endsWith('/responses') ? 'Responses_Create' : path.endsWith('/images/generations') ? 'ImageGenerations_Create' : path.endsWith('/audio/speech') ? 'Speech_Create' : 'ChatCompletions_Create';
  const version = new URLSearchParams(ctx.query ?? '').get('api-version') ?? 'v1';
  switch (status) {
    case 401:
      return { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.' };
    case 404:
      return { code: '404', message: 'Resource not found' };
    case 429:
      return { code: '429', message: `Requests to the ${op} Operation under Azure OpenAI API version ${version} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit.` };
    case 400:
      return { code: 'context_length_exceeded', message: "This model's maximum context length is 128000 tokens. However, your messages resulted in more tokens. Please reduce the length of the messages." };
    default:
      return status >= 500 ? { code: 'InternalServerError', message: 'The server had an error while processing your request. Sorry about that!' } : { code: String(status), message: `Simulated error (HTTP ${status}).` };
  }
}

export const azureProtocol: Protocol = {
  name: 'azure-openai',
  error(status, ctx, info) {
    const d = azureMessage(status, ctx);
    const headers: OutgoingHttpHeaders = { ...JSON_HEADERS, 'apim-request-id': `sim-${ctx.rid ?? '0'}` };
    const retryAfter = ctx.knobs?.retryAfter;
    if (status === 429 || retryAfter !== undefined) {
      headers['retry-after'] = String(retryAfter ?? 1);
      headers['retry-after-ms'] = String((retryAfter ?? 1) * 1000);
    }
    const error: Obj = { code: info?.code ?? d.code, message: info?.message ?? d.message };
    if (info?.param !== undefined) error.param = info.param;
    if (info?.type !== undefined) error.type = info.type;
    return { kind: 'json', status, body: JSON.stringify({ error }), headers };
  },
  streamError() {
    return { data: JSON.stringify({ error: { code: 'InternalServerError', message: 'The server had an error while processing your request. Sorry about that!' } }) };
  },
};

/** The checks Azure makes before the model runs: credential, api-version, deployment. */
function refuse(ctx: EndpointContext, deployment: string | null): JsonReply | undefined {
  const h = ctx.headers;
  const hasKey = typeof h['api-key'] === 'string' && h['api-key'] !== '';
  const hasBearer = typeof h.authorization === 'string' && /^Bearer \S+/.test(h.authorization);
  if (!hasKey && !hasBearer) return azureProtocol.error(401, ctx);
  if (!ctx.path.startsWith('/openai/v1/') && !new URLSearchParams(ctx.query).get('api-version')) {
    return azureProtocol.error(404, ctx, { code: '404', message: 'Resource not found' });
  }
  if (deployment !== null && ctx.knobs.models && !ctx.knobs.models.includes(deployment)) {
    return azureProtocol.error(404, ctx, { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.' });
  }
  return undefined;
}

/** Azure's filter annotations on an OpenAI chat answer (the first stream chunk: prompt filter results, no choices). */
function annotate(reply: Reply, ctx: EndpointContext): Reply {
  const promptFilters = [{ prompt_index: 0, content_filter_results: FILTERS }];
  if (reply.kind === 'sse') {
    const first = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: promptFilters };
    return { ...reply, events: [{ data: JSON.stringify(first) }, ...reply.events] };
  }
  if (reply.status !== 200) return reply;
  const body = JSON.parse(reply.body) as Obj;
  body.prompt_filter_results = promptFilters;
  if (Array.isArray(body.choices)) for (const c of body.choices) if (isObj(c)) c.content_filter_results = FILTERS;
  void ctx;
  return { ...reply, body: JSON.stringify(body) };
}

/** The deployment of a per-deployment path, the model of the body otherwise (Responses, v1). */
function withModel(ctx: EndpointContext, deployment: string | null): EndpointContext {
  if (deployment === null || !isObj(ctx.body)) return ctx;
  return { ...ctx, body: { ...ctx.body, model: deployment } };
}

const DEPLOYMENT = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings|images\/generations|audio\/speech)$/;

/** Azure's filter annotations on each generated image. */
function annotateImages(reply: Reply): Reply {
  if (reply.kind !== 'json' || reply.status !== 200) return reply;
  const body = JSON.parse(reply.body) as Obj;
  if (Array.isArray(body.data)) for (const d of body.data) if (isObj(d)) Object.assign(d, { content_filter_results: FILTERS, prompt_filter_results: { ...FILTERS, jailbreak: { filtered: false, detected: false } } });
  return { ...reply, body: JSON.stringify(body) };
}

function perDeployment(ctx: EndpointContext): Reply {
  const m = DEPLOYMENT.exec(ctx.path)!;
  const deployment = decodeURIComponent(m[1]);
  const bad = refuse(ctx, deployment);
  if (bad) return bad;
  const c = withModel(ctx, deployment);
  switch (m[2]) {
    case 'embeddings':
      return embeddings(c);
    case 'images/generations':
      return annotateImages(openaiImageGenerations(c));
    case 'audio/speech':
      return openaiSpeech(c);
    default:
      return annotate(chatCompletions(c), c);
  }
}

function bodyModel(ctx: EndpointContext): string | null {
  return isObj(ctx.body) && typeof ctx.body.model === 'string' ? ctx.body.model : null;
}

export const azureEndpoints: Endpoint[] = [
  { method: 'POST', path: DEPLOYMENT, protocol: azureProtocol, modelCall: true, handle: perDeployment },
  { method: 'POST', path: /^\/openai(\/v1)?\/responses$/, protocol: azureProtocol, modelCall: true, handle: (ctx) => refuse(ctx, bodyModel(ctx)) ?? createResponse(ctx) },
  { method: 'POST', path: '/openai/v1/chat/completions', protocol: azureProtocol, modelCall: true, handle: (ctx) => refuse(ctx, bodyModel(ctx)) ?? annotate(chatCompletions(ctx), ctx) },
  { method: 'POST', path: '/openai/v1/embeddings', protocol: azureProtocol, modelCall: true, handle: (ctx) => refuse(ctx, bodyModel(ctx)) ?? embeddings(ctx) },
];
