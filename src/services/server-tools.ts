/**
 * Server tools on `POST /chat/completions` (docs/server-tools.md): a request whose `tools` include `gateway:datetime`
 * or `gateway:web_search` (or `openrouter:…`, or OpenAI's `web_search*` shorthands) runs as a loop. Each model turn is
 * an ordinary chat completion (routing, fallbacks, limits, its own generation record), shown the server tools as
 * function tools; the gateway runs the calls the model makes to them, appends the results and asks again, until the
 * model answers without calling one, or a `stop_server_tools_when` condition (else the call budget, 30) ends the
 * loop — then one last turn runs without the server tools, so that the answer ends in text.
 *
 * Decisions:
 * - The answer is the last turn's, with `usage` summed over every turn (tokens, cost and cost details) and
 *   `server_tool_use_details`; its id is the last turn's generation id; `gateway_metadata.server_tools` lists every
 *   turn's generation id.
 * - The client's own function tools stay offered on every turn. A turn that calls one of them ends the loop: the
 *   answer carries those calls (server tool calls of the same turn are left out — the client could not answer them).
 * - `stream: true`: the turns run unstreamed, `: GATEWAY PROCESSING` comments keep the connection alive meanwhile, and
 *   the answer is sent as chat completion chunks (content, finish, usage) once the loop ends. Tokens cannot be relayed
 *   as they come: until a turn ends, it is not known whether it is the answer or a tool call.
 * - A tool that fails (search engine down, bad time zone) answers the model with `{error}`; the loop goes on. A model
 *   turn that fails fails the request, like a chat completion.
 */
import type { ServerResponse } from 'node:http';
import {
  callBudget,
  domainAllowed,
  datetimeResult,
  isServerToolType,
  serverToolFunctions,
  serverToolName,
  shouldStop,
  type LoopState,
  type ServerTool,
  type StopCondition,
  webSearchOptions,
} from '../core/server-tools.js';
import { badRequest, HttpError } from '../core/errors.js';
import type { WebFetcher } from '../providers/web/fetch.js';
import type { WebSearch } from '../providers/web/search.js';
import type { ChatCall, ChatService } from './chat.js';
import type { ImagesBody, ImagesService } from './images.js';
import { streamOneAnswer } from './reply-stream.js';

type Json = Record<string, unknown>;

/** The image model of `gateway:image_generation` when its `parameters.model` names none. */
export const IMAGE_TOOL_MODEL = 'google/gemini-2.5-flash-image';

/** What `gateway:image_generation` made during a loop: the images (chat `message.images` items) and their usage. */
interface GeneratedImages {
  images: Json[];
  usages: Json[];
}

/** A server tool as a request lists it. */
export interface FoundServerTool {
  index: number;
  type: string;
  parameters: Json;
  /** The whole tool object (e.g. Anthropic's `max_uses`). */
  raw: Json;
}

/** The `tools` of a request body that are server tools (with their index), or null when there are none. */
export function serverToolsOf(body: Json): FoundServerTool[] | null {
  const tools = body.tools;
  if (!Array.isArray(tools)) return null;
  let out: FoundServerTool[] | null = null;
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i] as Json;
    if (!t || !isServerToolType(t.type)) continue;
    // Web search options on the tool itself (OpenAI's, Anthropic's) count as parameters; `parameters` wins.
    const options = serverToolName(t.type) === 'web_search' ? webSearchOptions(t) : {};
    (out ??= []).push({ index: i, type: t.type, parameters: { ...options, ...((t.parameters as Json | undefined) ?? {}) }, raw: t });
  }
  return out;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Sums the usage of the turns: tokens, cost (null once a turn's is), cost details, cached and reasoning tokens;
 * `is_byok` when a turn (or an image it made) was served on a BYOK credential.
 */
function sumUsage(turns: Json[]): Json {
  let prompt = 0;
  let completion = 0;
  let cached = 0;
  let reasoning = 0;
  let cost: number | null = 0;
  const details: Record<string, number | null> = { upstream_inference_prompt_cost: 0, upstream_inference_completions_cost: 0, upstream_inference_cost: 0 };
  for (const u of turns) {
    prompt += num(u.prompt_tokens);
    completion += num(u.completion_tokens);
    cached += num((u.prompt_tokens_details as Json | undefined)?.cached_tokens);
    reasoning += num((u.completion_tokens_details as Json | undefined)?.reasoning_tokens);
    cost = cost === null || typeof u.cost !== 'number' ? null : cost + u.cost;
    const d = (u.cost_details as Record<string, unknown> | undefined) ?? {};
    for (const k of Object.keys(details)) details[k] = details[k] === null || typeof d[k] !== 'number' ? null : (details[k] as number) + (d[k] as number);
  }
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: reasoning },
    cost,
    cost_details: details,
    is_byok: turns.some((u) => u.is_byok === true),
  };
}

export class ServerToolService {
  constructor(
    private readonly deps: {
      chat: ChatService;
      /** The search engine of `gateway:web_search`; null when none is configured (the tool is then refused, 400). */
      search: WebSearch | null;
      /** The fetcher of `gateway:web_fetch`; null when the operator has not turned it on (the tool is then refused, 400). */
      fetcher: WebFetcher | null;
      keepaliveMs: number;
      now?: () => number;
      /** The images service of `gateway:image_generation` (docs/images.md); absent: the tool is refused (400). */
      images?: ImagesService;
    },
  ) {}

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  /**
   * The server tools this gateway runs for a request of `api`, or null. A provider's own web search type on its own
   * API (`web_search_20250305` on Messages, `web_search_preview` on Responses) is left to the provider when no search
   * engine is configured: a request passed straight to Anthropic or OpenAI keeps it, and that provider runs it.
   */
  find(api: 'chat' | 'responses' | 'messages', body: Json): FoundServerTool[] | null {
    const found = serverToolsOf(body);
    if (!found || api === 'chat' || this.deps.search) return found;
    const ours = found.filter((t) => t.type.includes(':') || serverToolName(t.type) !== 'web_search');
    return ours.length > 0 ? ours : null;
  }

  /** The server tools of a request, checked: one this gateway does not run, or web search without an engine, is a 400. */
  tools(found: FoundServerTool[], body: Json): ServerTool[] {
    const out: ServerTool[] = [];
    for (const t of found) {
      const name = serverToolName(t.type);
      const field = `tools[${t.index}].type`;
      if (!name) throw badRequest(`${field}: "${t.type}" is not a server tool this gateway runs (it runs gateway:web_search, gateway:web_fetch, gateway:datetime and gateway:image_generation)`, { field });
      if (name === 'web_search' && !this.deps.search) {
        throw badRequest(`${field}: web search needs a search engine; the operator sets GATEWAY_WEB_SEARCH_URL (a SearXNG instance) or GATEWAY_WEB_SEARCH_ENGINE=tavily with GATEWAY_WEB_SEARCH_API_KEY`, { field });
      }
      if (name === 'image_generation' && !this.deps.images) throw badRequest(`${field}: image generation is not available on this gateway`, { field });
      if (name === 'web_fetch' && !this.deps.fetcher) throw badRequest(`${field}: web fetch is off on this gateway; the operator turns it on with GATEWAY_WEB_FETCH=true`, { field });
      if (!out.some((x) => x.name === name)) out.push({ name, parameters: t.parameters });
    }
    const clientNames = new Set(((body.tools as Json[]).filter((t) => t?.type === 'function') as Array<{ function?: { name?: unknown } }>).map((t) => t.function?.name));
    for (const t of out) if (clientNames.has(t.name)) throw badRequest(`tools: a function named "${t.name}" clashes with the ${t.name} server tool; rename it`, { field: 'tools' });
    return out;
  }

  /** Runs one server tool call; the result is the tool message's content (errors included, for the model to read). */
  private async execute(tool: ServerTool, args: string, call: ChatCall, details: { web_search_requests: number }, made: GeneratedImages): Promise<string> {
    let input: Json = {};
    try {
      const parsed = JSON.parse(args || '{}') as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) input = parsed as Json;
    } catch {
      return JSON.stringify({ error: 'The arguments are not a JSON object' });
    }
    if (tool.name === 'datetime') return JSON.stringify(datetimeResult(this.now(), input.timezone));
    if (tool.name === 'image_generation') return this.generateImage(tool, input, call, made);
    if (tool.name === 'web_fetch') {
      const url = typeof input.url === 'string' ? input.url.trim() : '';
      if (!url) return JSON.stringify({ error: 'url is required' });
      const maxChars = Math.min(Math.max(Math.trunc(num(tool.parameters.max_chars)) || 20_000, 1_000), 100_000);
      return this.cancellable(call, 'Web fetch failed', async (signal) => JSON.stringify(await this.deps.fetcher!.fetch(url, maxChars, signal)));
    }
    const query = typeof input.query === 'string' ? input.query.trim() : '';
    if (!query) return JSON.stringify({ error: 'query is required' });
    const max = Math.min(Math.max(Math.trunc(num(tool.parameters.max_results)) || 5, 1), 20);
    const allowed = tool.parameters.allowed_domains as string[] | undefined;
    const blocked = tool.parameters.blocked_domains as string[] | undefined;
    const filtered = (Array.isArray(allowed) && allowed.length > 0) || (Array.isArray(blocked) && blocked.length > 0);
    details.web_search_requests++;
    return this.cancellable(call, 'Web search failed', async (signal) => {
      // With domain lists, the most results are asked for and those outside the lists dropped (any engine).
      const found = await this.deps.search!.search(query, filtered ? 20 : max, signal);
      const results = filtered ? found.filter((r) => domainAllowed(r.url, allowed, blocked)).slice(0, max) : found;
      return JSON.stringify({ query, results });
    });
  }

  /**
   * `gateway:image_generation`: the images service (its own routing, reservation, record and cost) with the tool's
   * `parameters` (`model`, default `IMAGE_TOOL_MODEL`, and image settings such as `quality`, `size`, `aspect_ratio`);
   * the images join the answer's `message.images`, their cost its usage; the model reads how many were made. A
   * refusal or an upstream failure is the tool's `{error}` for the model to read (a 402 ends the request).
   */
  private async generateImage(tool: ServerTool, input: Json, call: ChatCall, made: GeneratedImages): Promise<string> {
    const images = this.deps.images!;
    const prompt = typeof input.prompt === 'string' ? input.prompt.trim() : '';
    if (!prompt) return JSON.stringify({ error: 'prompt is required' });
    const p = tool.parameters;
    const pick = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : undefined);
    const body: ImagesBody = { model: pick('model') ?? IMAGE_TOOL_MODEL, prompt: prompt.slice(0, 32_000) };
    for (const k of ['size', 'aspect_ratio', 'quality', 'background', 'output_format'] as const) if (pick(k)) body[k] = pick(k);
    try {
      const prepared = await images.prepare(body, { key: call.key, requestId: call.requestId, wantMetadata: false, cancel: call.cancel });
      const generated = await images.generate(prepared, { key: call.key, requestId: call.requestId, wantMetadata: false, cancel: call.cancel });
      // The images API offers no response cache: its reply is always a fresh body.
      const reply = 'body' in generated ? generated : { body: JSON.parse(generated.stored.text) as Json };
      const data = (reply.body.data as Array<{ b64_json: string; media_type?: string }>) ?? [];
      for (const d of data) made.images.push({ type: 'image_url', image_url: { url: `data:${d.media_type ?? 'image/png'};base64,${d.b64_json}` } });
      const usage = (reply.body.usage as Json | undefined) ?? {};
      const cost = usage.cost;
      made.usages.push({ cost: typeof cost === 'number' ? cost : null, cost_details: { upstream_inference_prompt_cost: 0, upstream_inference_completions_cost: cost, upstream_inference_cost: cost }, is_byok: usage.is_byok === true });
      return JSON.stringify({ images_generated: data.length, note: 'The image is shown to the user with your answer; do not repeat its data.' });
    } catch (err) {
      if (err instanceof HttpError && (err.status === 402 || err.status === 499)) throw err;
      return JSON.stringify({ error: `Image generation failed: ${(err as Error).message}` });
    }
  }

  /** Runs a tool's I/O, aborted when the client goes away (499); any other failure is the tool's `{error}` for the model. */
  private async cancellable(call: ChatCall, what: string, run: (signal: AbortSignal) => Promise<string>): Promise<string> {
    if (call.cancel.aborted) throw new HttpError(499, 'Request cancelled by the client');
    const abort = new AbortController();
    const onCancel = () => abort.abort();
    call.cancel.listen(onCancel);
    try {
      return await run(abort.signal);
    } catch (err) {
      if (call.cancel.aborted) throw new HttpError(499, 'Request cancelled by the client');
      return JSON.stringify({ error: `${what}: ${(err as Error).message}` });
    } finally {
      call.cancel.unlisten(onCancel);
    }
  }

  /** The loop: model turns and tool runs; resolves with the answer (the last turn's body, usage summed), its id and what the loop ran. */
  async run(body: Json, tools: ServerTool[], call: ChatCall): Promise<{ id: string; body: Json; details: ServerToolDetails }> {
    const names = new Set<string>(tools.map((t) => t.name));
    const functions = serverToolFunctions(tools);
    const clientTools = (body.tools as Json[]).filter((t) => !isServerToolType(t?.type));
    const conditions = body.stop_server_tools_when as StopCondition[] | undefined;
    const maxToolCalls = typeof body.max_tool_calls === 'number' ? body.max_tool_calls : undefined;
    const messages = [...(body.messages as Json[])];
    const usages: Json[] = [];
    const ids: string[] = [];
    const details: ServerToolDetails = { tool_calls_requested: 0, tool_calls_executed: 0, web_search_requests: 0 };
    const state: LoopState = { steps: 0, executed: 0, tokens: 0, cost: 0, calledTools: [], finishReason: null };
    const made: GeneratedImages = { images: [], usages: [] };
    let last = false;
    for (;;) {
      // This turn's body: the client's, with the conversation so far; the server tools unless this is the last turn.
      const turn: Json = { ...body, messages, stream: false };
      delete turn.stream_options;
      delete turn.stop_server_tools_when;
      delete turn.max_tool_calls;
      const offered = last ? clientTools : [...clientTools, ...functions];
      if (offered.length > 0) turn.tools = offered;
      else delete turn.tools;
      turn.tool_choice = this.toolChoice(body.tool_choice, state.steps === 0, last, names, clientTools.length > 0);
      if (turn.tool_choice === undefined) delete turn.tool_choice;

      const prepared = await this.deps.chat.prepare('chat', turn, call);
      // Each turn reserves and settles its own cost (the runner's spend seam, docs/spend.md).
      const answer: { id: string; body: Json } = await this.deps.chat.complete(prepared, call);
      ids.push(answer.id);
      const usage = (answer.body.usage as Json | undefined) ?? {};
      usages.push(usage);
      const choice = ((answer.body.choices as Json[] | undefined) ?? [])[0] ?? {};
      const message = (choice.message as Json | undefined) ?? { role: 'assistant', content: null };
      const calls = (Array.isArray(message.tool_calls) ? message.tool_calls : []) as Array<{ id: string; function?: { name?: string; arguments?: string } }>;
      const serverCalls = last ? [] : calls.filter((c) => names.has(c.function?.name ?? ''));
      const clientCalls = calls.filter((c) => !names.has(c.function?.name ?? ''));
      details.tool_calls_requested += calls.length - clientCalls.length;

      state.steps++;
      state.tokens += num(usage.prompt_tokens) + num(usage.completion_tokens);
      state.cost = state.cost === null || typeof usage.cost !== 'number' ? null : state.cost + usage.cost;
      state.calledTools = calls.map((c) => c.function?.name ?? '');
      state.finishReason = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;

      if (serverCalls.length === 0 || clientCalls.length > 0) {
        // The answer: no server tool call, or calls the client must answer (server calls of this turn left out).
        if (calls.length !== clientCalls.length) message.tool_calls = clientCalls;
        // Images made by gateway:image_generation: in the message, their cost in the usage.
        if (made.images.length > 0) message.images = [...((message.images as Json[] | undefined) ?? []), ...made.images];
        const out: Json = { ...answer.body, usage: { ...sumUsage([...usages, ...made.usages]), server_tool_use_details: details } };
        if (out.gateway_metadata && typeof out.gateway_metadata === 'object') out.gateway_metadata = { ...(out.gateway_metadata as Json), server_tools: { steps: state.steps, generations: ids } };
        return { id: answer.id, body: out, details };
      }
      // The turn as the model gave it (reasoning and its signatures included: providers want them back with the calls).
      messages.push({ ...message, content: message.content ?? null, tool_calls: serverCalls });
      const budget = callBudget(conditions, maxToolCalls);
      for (const c of serverCalls) {
        // Every call gets an answer; those beyond the budget are refused, not run.
        if (state.executed >= budget) {
          messages.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify({ error: 'The server tool call budget of this request is spent' }) });
          continue;
        }
        const tool = tools.find((t) => t.name === c.function?.name)!;
        const content = await this.execute(tool, c.function?.arguments ?? '{}', call, details, made);
        details.tool_calls_executed++;
        state.executed++;
        messages.push({ role: 'tool', tool_call_id: c.id, content });
      }
      if (shouldStop(state, conditions, maxToolCalls)) last = true;
    }
  }

  /**
   * The turn's `tool_choice`: a choice naming a server tool (or `required`) holds on the first turn only — afterwards
   * `auto`, or the loop would never end; none at all on the last turn unless the client's own tools remain.
   */
  private toolChoice(choice: unknown, first: boolean, last: boolean, names: Set<string>, clientTools: boolean): unknown {
    const serverChoice = (typeof choice === 'object' && choice !== null && isServerToolType((choice as Json).type)) || (typeof choice === 'object' && choice !== null && names.has(String(((choice as Json).function as Json | undefined)?.name)));
    if (last) return clientTools && !serverChoice && choice !== 'required' ? choice : undefined;
    if (serverChoice) {
      if (!first) return 'auto';
      const type = (choice as Json).type as string;
      const name = isServerToolType(type) ? serverToolName(type) : String(((choice as Json).function as Json).name);
      return { type: 'function', function: { name } };
    }
    if (choice === 'required' && !first) return 'auto';
    return choice;
  }

  /**
   * `stream: true`: keep-alive comments while the loop runs, then the answer as the API's event stream (`encode`,
   * chat completion chunks by default).
   */
  stream(body: Json, tools: ServerTool[], call: ChatCall, raw: ServerResponse, requestId: string, encode: AnswerEncoder = CHAT_ENCODER): Promise<void> {
    return streamOneAnswer(raw, requestId, this.deps.keepaliveMs, () => call.cancel.aborted, () => this.run(body, tools, call), {
      id: (answer) => answer.id,
      events: (answer) => encode.answer(answer.body, answer.details),
      // The 200 is already sent (keep-alive comments): the error ends the stream with the API's error event.
      error: (err) => encode.error(err instanceof HttpError ? err : new HttpError(500, 'Internal server error'), body, Math.floor(this.now() / 1000)),
    });
  }
}

/** What the loop ran, as reported in `usage`. */
export interface ServerToolDetails {
  tool_calls_requested: number;
  tool_calls_executed: number;
  web_search_requests: number;
}

/** How a loop's answer (a chat completion) is sent as an API's event stream. */
export interface AnswerEncoder {
  answer(chatAnswer: Json, details: ServerToolDetails): string;
  error(e: HttpError, body: Json, created: number): string;
}

const CHAT_ENCODER: AnswerEncoder = {
  answer: (chatAnswer) => answerChunks(chatAnswer),
  error: (e, body, created) => {
    const chunk = { id: null, object: 'chat.completion.chunk', created, model: body.model ?? null, choices: [{ index: 0, delta: {}, finish_reason: 'error' }], error: { code: e.status, message: e.message, metadata: e.metadata ?? null } };
    return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
  },
};

/** A chat completion as the chunks of a stream: the message, its finish, then usage (and metadata), then `[DONE]` — as every chat stream ends. */
export function answerChunks(answer: Json): string {
  const base = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model, ...(answer.provider ? { provider: answer.provider } : {}), system_fingerprint: answer.system_fingerprint ?? null };
  const choice = ((answer.choices as Json[] | undefined) ?? [])[0] ?? {};
  const message = (choice.message as Json | undefined) ?? {};
  const calls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0 ? (message.tool_calls as Json[]) : null;
  const delta: Json = { role: 'assistant', content: message.content ?? (calls ? null : '') };
  if (typeof message.reasoning === 'string') delta.reasoning = message.reasoning;
  if (calls) delta.tool_calls = calls.map((c, index) => ({ index, ...c }));
  const lines: Json[] = [
    { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason ?? 'stop' }] },
  ];
  const last: Json = { ...base, choices: [], usage: answer.usage };
  if (answer.gateway_metadata) last.gateway_metadata = answer.gateway_metadata;
  lines.push(last);
  return `${lines.map((l) => `data: ${JSON.stringify(l)}\n\n`).join('')}data: [DONE]\n\n`;
}
