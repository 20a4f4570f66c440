/**
 * Server tools (docs/server-tools.md): tools in a chat request that the gateway runs itself, in a loop around the
 * model — `gateway:datetime`, `gateway:web_search`, `gateway:web_fetch` and `gateway:image_generation` (`openrouter:` is accepted as the legacy prefix; OpenAI's
 * `web_search` / `web_search_preview` shorthands mean `gateway:web_search`). Pure logic: which tools a request names,
 * the function definitions the model is shown for them, and the stop conditions of the loop.
 */

/** The server tools this gateway runs, by their function name as the model sees it. */
export type ServerToolName = 'web_search' | 'web_fetch' | 'datetime' | 'image_generation';

export interface ServerTool {
  name: ServerToolName;
  /** The tool's own settings from the request (`parameters`), e.g. `max_results` for web search. */
  parameters: Record<string, unknown>;
}

/** Tool types that are server tools (this gateway's prefix, the legacy one, OpenAI's web search shorthands). */
export function isServerToolType(type: unknown): type is string {
  return typeof type === 'string' && (type.startsWith('gateway:') || type.startsWith('openrouter:') || type === 'web_search' || type.startsWith('web_search_'));
}

/** The server tool a tool type names, or null when this gateway does not run it. */
export function serverToolName(type: string): ServerToolName | null {
  if (type === 'web_search' || type.startsWith('web_search_')) return 'web_search';
  const name = type.slice(type.indexOf(':') + 1);
  return name === 'web_search' || name === 'web_fetch' || name === 'datetime' || name === 'image_generation' ? name : null;
}

/** The function definitions the model is shown for the request's server tools. */
export function serverToolFunctions(tools: ServerTool[]): Array<Record<string, unknown>> {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, ...FUNCTIONS[t.name] } }));
}

const FUNCTIONS: Record<ServerToolName, { description: string; parameters: Record<string, unknown> }> = {
  web_search: {
    description: 'Search the web. Returns the top results (title, URL, snippet) for a query; use it for recent or specific facts.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'The search query.' } }, required: ['query'], additionalProperties: false },
  },
  web_fetch: {
    description: 'Fetch a web page (http or https) and return its text, e.g. to read a search result in full.',
    parameters: { type: 'object', properties: { url: { type: 'string', description: 'The absolute URL of the page.' } }, required: ['url'], additionalProperties: false },
  },
  image_generation: {
    description: 'Generate an image from a text description; the image is shown to the user with your answer.',
    parameters: { type: 'object', properties: { prompt: { type: 'string', description: 'A detailed description of the image.' } }, required: ['prompt'], additionalProperties: false },
  },
  datetime: {
    description: 'The current date and time, in UTC or in an IANA time zone.',
    parameters: { type: 'object', properties: { timezone: { type: 'string', description: 'An IANA time zone such as Europe/Paris; UTC when omitted.' } }, additionalProperties: false },
  },
};

/** A condition of `stop_server_tools_when`: any one that holds ends the loop (the next turn runs without tools). */
export type StopCondition =
  | { type: 'step_count_is'; step_count: number }
  | { type: 'has_tool_call'; tool_name: string }
  | { type: 'max_tokens_used'; max_tokens: number }
  | { type: 'max_cost'; max_cost_in_dollars: number }
  | { type: 'finish_reason_is'; reason: string };

/** Where the loop stands after a model turn. */
export interface LoopState {
  /** Model turns so far. */
  steps: number;
  /** Server tool calls executed so far. */
  executed: number;
  /** Tokens (prompt + completion) of every turn so far. */
  tokens: number;
  /** USD of every turn so far (null once a turn's price was unknown). */
  cost: number | null;
  /** Names of the tools the last turn called. */
  calledTools: string[];
  /** The last turn's finish reason. */
  finishReason: string | null;
}

/** The outer budget of server tool calls (the hosted API's default and maximum). */
export const MAX_SERVER_TOOL_CALLS = 30;

/**
 * How many server tool calls the loop may run: `max_tool_calls` (at most 30) without conditions; with
 * `stop_server_tools_when`, which replaces `max_tool_calls`, the outer budget of 30 still holds.
 */
export function callBudget(conditions: StopCondition[] | undefined, maxToolCalls: number | undefined): number {
  if (conditions && conditions.length > 0) return MAX_SERVER_TOOL_CALLS;
  return Math.max(0, Math.min(maxToolCalls ?? MAX_SERVER_TOOL_CALLS, MAX_SERVER_TOOL_CALLS));
}

/** Whether the loop stops after this turn: the call budget is spent, or a stop condition holds. */
export function shouldStop(state: LoopState, conditions: StopCondition[] | undefined, maxToolCalls: number | undefined): boolean {
  if (state.executed >= callBudget(conditions, maxToolCalls)) return true;
  if (!conditions || conditions.length === 0) return false;
  return conditions.some((c) => {
    switch (c.type) {
      case 'step_count_is':
        return state.steps >= c.step_count;
      case 'has_tool_call':
        return state.calledTools.includes(c.tool_name);
      case 'max_tokens_used':
        return state.tokens >= c.max_tokens;
      case 'max_cost':
        return state.cost !== null && state.cost >= c.max_cost_in_dollars;
      case 'finish_reason_is':
        return state.finishReason === c.reason;
    }
  });
}

/** The current time as the datetime tool answers it; a bad time zone is the tool's error, for the model to read. */
export function datetimeResult(now: number, timezone: unknown): Record<string, unknown> {
  const tz = typeof timezone === 'string' && timezone.trim() ? timezone.trim() : 'UTC';
  let local: string;
  try {
    local = new Intl.DateTimeFormat('en-US', { timeZone: tz, dateStyle: 'full', timeStyle: 'long' }).format(now);
  } catch {
    return { error: `Unknown time zone "${tz}"; use an IANA name such as Europe/Paris` };
  }
  return { iso: new Date(now).toISOString(), timezone: tz, local, unix: Math.floor(now / 1000) };
}

const CONTEXT_SIZE_RESULTS: Record<string, number> = { low: 3, medium: 5, high: 10 };
const domainList = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((d): d is string => typeof d === 'string' && d !== '').map((d) => d.toLowerCase().replace(/^https?:\/\//, '').replace(/\/.*$/, '').replace(/^\*?\./, '')) : undefined;

/**
 * The web search options a client gives on the tool itself, as the gateway's web search parameters: OpenAI's
 * `filters.allowed_domains` and `search_context_size` (low 3, medium 5, high 10 results), Anthropic's
 * `allowed_domains` / `blocked_domains`. (`user_location` has no equivalent in a plain search engine query.)
 */
export function webSearchOptions(tool: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const filters = tool.filters && typeof tool.filters === 'object' ? (tool.filters as Record<string, unknown>) : {};
  const allowed = domainList(tool.allowed_domains) ?? domainList(filters.allowed_domains);
  const blocked = domainList(tool.blocked_domains) ?? domainList(filters.blocked_domains);
  if (allowed && allowed.length > 0) out.allowed_domains = allowed;
  if (blocked && blocked.length > 0) out.blocked_domains = blocked;
  const size = typeof tool.search_context_size === 'string' ? CONTEXT_SIZE_RESULTS[tool.search_context_size] : undefined;
  if (size !== undefined) out.max_results = size;
  return out;
}

/** Whether a result's URL passes the domain lists (a domain covers its subdomains). */
export function domainAllowed(url: string, allowed: readonly string[] | undefined, blocked: readonly string[] | undefined): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  const under = (d: string) => host === d || host.endsWith(`.${d}`);
  if (blocked?.some(under)) return false;
  return !allowed || allowed.length === 0 || allowed.some(under);
}
