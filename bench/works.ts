/**
 * The workloads of the work-size table (bench/run.ts): request bodies of given sizes, and 10,000-chunk streams on the
 * same-protocol path and translated, unpaced or paced (a fixed number of chunks per upstream write and read).
 */

/** Where a workload is sent: the bare proxy (`bare-proxy`) or the gateway (`gateway`), at its chat URL with its model. */
export interface WorkTarget {
  name: string;
  url: string;
  model: string;
}

/**
 * A body of about `bytes` bytes: one user message, or `messages` messages alternating user/assistant; for chat
 * completions, the Messages API (with `max_tokens`) or the Responses API (the messages as `input`).
 */
export function sizedBody(model: string, bytes: number, messages = 1, stream = false, api: WorkApi = 'chat', words = LOREM): string {
  const text = sizedText(Math.max(1, Math.floor(bytes / messages) - 40), words);
  const list = Array.from({ length: messages }, (_, i) => ({ role: i % 2 === 0 || i === messages - 1 ? 'user' : 'assistant', content: text }));
  if (api === 'responses') return JSON.stringify({ model, input: list, stream });
  return JSON.stringify(api === 'messages' ? { model, max_tokens: 64, messages: list, stream } : { model, messages: list, stream });
}

export type WorkApi = 'chat' | 'messages' | 'responses';

const LOREM = 'lorem ipsum dolor sit amet ';
/** Mixed CJK, emoji and Latin text (3-, 4- and 1-byte UTF-8; the emoji are surrogate pairs in UTF-16): a real prompt's. */
export const NON_ASCII = '日本語のテキスト、中文文本和한국어 텍스트 🙂🚀✨ mixed with ASCII — «quotes» ';

/** `words` repeated to `bytes` UTF-8 bytes (never cutting a character). */
export function sizedText(bytes: number, words = LOREM): string {
  const whole = words.repeat(Math.floor(bytes / Buffer.byteLength(words)));
  let left = bytes - Buffer.byteLength(whole);
  let rest = '';
  for (const ch of words) {
    left -= Buffer.byteLength(ch);
    if (left < 0) break;
    rest += ch;
  }
  return whole + rest;
}

/**
 * A Gemini generateContent body (the model is in the path) of about `bytes` bytes: one user content with one text
 * part, or `contents` contents alternating model/user, the last a user one (as a chat history is: an odd count
 * starts with the user), each with one text part.
 */
export function geminiSizedBody(bytes: number, contents = 1): string {
  const text = sizedText(Math.max(1, Math.floor(bytes / contents) - 40));
  const list = Array.from({ length: contents }, (_, i) => ({ role: (contents - 1 - i) % 2 === 0 ? 'user' : 'model', parts: [{ text }] }));
  return JSON.stringify({ contents: list, generationConfig: { maxOutputTokens: 64 } });
}

export interface Work {
  name: string;
  connections: number;
  body: (model: string) => string;
  /** Chunks per stream: CPU is then reported per chunk. */
  chunks?: number;
  /**
   * Another client API than chat (translated streams): per target, the path under its origin and the model (in the
   * body, or in the path for Gemini); default: the target's chat URL and model.
   */
  via?: Record<'bare-proxy' | 'gateway', { path: string; model: string }>;
  /** The client API, sent to a same-protocol upstream (default chat completions → OpenAI-compatible). */
  api?: WorkApi;
  /**
   * A paced stream: the simulator writes this many content chunks per write with a pause after each, so that
   * every write is one socket read for the bare proxy and the gateway alike (the reads are counted to show it).
   */
  burst?: number;
}

/**
 * A target's URL and model for a work's API: the gateway's model routed to that protocol. The bare proxy forwards
 * only the content type, which the simulator's Anthropic route refuses (it wants `anthropic-version`), so its
 * reference for a Messages body is the same bytes sent to the chat route (to a byte-forwarding proxy, bytes are bytes).
 */
export function workTarget(t: WorkTarget, api: WorkApi = 'chat'): { url: string; model: string } {
  if (api === 'chat') return { url: t.url, model: t.model };
  if (t.name !== 'gateway') return { url: api === 'messages' ? t.url : t.url.replace(/\/chat\/completions$/, '/responses'), model: t.model };
  return { url: t.url.replace(/\/chat\/completions$/, api === 'messages' ? '/messages' : '/responses'), model: api === 'messages' ? 'bench/claude' : 'bench/responses' };
}

/** A Messages body (Anthropic's API) streaming one short user message. */
const messagesBody = (model: string) => JSON.stringify({ model, max_tokens: 20_000, messages: [{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(6) }], stream: true });
/** A Gemini generateContent body (the model is in the path). */
const geminiBody = () => JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'lorem ipsum dolor sit amet '.repeat(6) }] }], generationConfig: { maxOutputTokens: 20_000 } });
const geminiPath = (model: string) => `/api/v1beta/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`;

/**
 * A Gemini generateContent row's targets: the bare proxy forwards to the simulator's Gemini endpoint (it strips
 * `/api`), the gateway routes `bench/gemini` to a Google upstream (the same simulator endpoint): same protocol.
 */
const geminiVia = (method: string) => ({
  'bare-proxy': { path: `/api/v1beta/models/bench-model:${method}`, model: 'bench-model' },
  gateway: { path: `/api/v1beta/models/${encodeURIComponent('bench/gemini')}:${method}`, model: 'bench/gemini' },
});

export const WORK_LIST: Work[] = [
  { name: '1 KB body', connections: 64, body: (m) => sizedBody(m, 1024) },
  { name: '100 KB body', connections: 16, body: (m) => sizedBody(m, 100 * 1024) },
  { name: '1 MB body', connections: 16, body: (m) => sizedBody(m, 1024 * 1024) },
  { name: '1,000 messages (~1 MB)', connections: 16, body: (m) => sizedBody(m, 1024 * 1024, 1000) },
  { name: '1,000 messages, Messages API (~1 MB)', connections: 16, api: 'messages', body: (m) => sizedBody(m, 1024 * 1024, 1000, false, 'messages') },
  { name: '1,000 input items, Responses API (~1 MB)', connections: 16, api: 'responses', body: (m) => sizedBody(m, 1024 * 1024, 1000, false, 'responses') },
  { name: '1 MB body of non-ASCII text (CJK, emoji)', connections: 16, body: (m) => sizedBody(m, 1024 * 1024, 1, false, 'chat', NON_ASCII) },
  { name: '1 MB Gemini generateContent body (one part)', connections: 16, body: () => geminiSizedBody(1024 * 1024), via: geminiVia('generateContent') },
  { name: '1,001 Gemini contents (~1 MB)', connections: 16, body: () => geminiSizedBody(1024 * 1024, 1001), via: geminiVia('generateContent') },
  { name: '10,000-chunk stream', connections: 8, chunks: 10_000, body: (m) => sizedBody(m, 200, 1, true) },
  {
    name: '10,000-chunk stream, Messages in → chat upstream',
    connections: 8,
    chunks: 10_000,
    // The bare proxy relays the chat stream here (its upstream's protocol): it forwards only the content type, and
    // the simulator's Messages endpoint, as Anthropic's, refuses a request without `anthropic-version`.
    body: (m) => (m === 'bench/model' ? messagesBody(m) : sizedBody(m, 200, 1, true)),
    via: { 'bare-proxy': { path: '/v1/chat/completions', model: 'bench-model' }, gateway: { path: '/api/v1/messages', model: 'bench/model' } },
  },
  {
    name: '10,000-chunk stream, chat in → Messages upstream',
    connections: 8,
    chunks: 10_000,
    body: (m) => sizedBody(m, 200, 1, true).replace(/^\{/, '{"max_tokens":20000,'),
    via: { 'bare-proxy': { path: '/v1/chat/completions', model: 'bench-model' }, gateway: { path: '/api/v1/chat/completions', model: 'bench/claude' } },
  },
  {
    name: '10,000-chunk stream, Gemini in → Responses upstream',
    connections: 8,
    chunks: 10_000,
    body: geminiBody,
    via: { 'bare-proxy': { path: geminiPath('bench-model'), model: 'bench-model' }, gateway: { path: geminiPath('bench/responses'), model: 'bench/responses' } },
  },
];

/**
 * Every stream row again with a fixed read pattern (K chunks per upstream write and read) for each K of `bursts`: the
 * unpaced rows' reads carry as many chunks as have arrived when the relay comes back for more, which depends on how
 * fast each side drains the upstream, and a read costs its system calls whatever it carries.
 */
export function pacedWorks(bursts: number[]): Work[] {
  return bursts.flatMap((k) => WORK_LIST.filter((w) => w.chunks).map((w) => ({ ...w, name: `${w.name}, ${k} per read`, burst: k })));
}
