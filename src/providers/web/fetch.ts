/**
 * Page fetching for the `gateway:web_fetch` server tool (docs/server-tools.md): `GET` of a public http(s) URL that a
 * model asked for, its text returned to the model.
 *
 * A model's URL is untrusted input (a prompt can inject one), so:
 * - only http and https, without credentials in the URL;
 * - no loopback, private or link-local address — neither a literal one nor one a host name resolves to: the check
 *   runs in the connection's own DNS lookup, so the address checked is the address connected to (no DNS rebinding);
 *   an operator may allow them (`GATEWAY_WEB_FETCH_ALLOW_PRIVATE`, for intranets and tests);
 * - redirects are followed by hand, at most 5, each target checked again;
 * - at most 2 MiB is read, and the whole fetch (redirects and body) ends within 15 s; HTML becomes plain text
 *   (html-to-text, its work bounded: 500 000 characters, 64 levels), text and JSON stay as they are, other content
 *   types are refused.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { hostOf, isLoopback, isPrivateAddress } from '../../core/addresses.js';

export interface FetchedPage {
  url: string;
  status: number;
  content_type: string;
  title?: string;
  content: string;
  truncated: boolean;
}

const MAX_BYTES = 2 * 1024 * 1024;
/** The whole fetch — redirects and body included — ends within this. */
const TOTAL_MS = 15_000;
const MAX_REDIRECTS = 5;
const TEXT_TYPES = /^(text\/|application\/(json|xml|xhtml\+xml|ld\+json|javascript)|[a-z]+\/[a-z.+-]*\+(json|xml))/;

/** How pages become text: links as their text, no images, headings as written (not upper-cased). */
const HTML_SELECTORS = [
  { selector: 'a', options: { ignoreHref: true } },
  { selector: 'img', format: 'skip' },
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
];

/** Bounds on the conversion's work (it runs on the request thread): input characters, nesting, children per node. */
const HTML_LIMITS = { maxInputLength: 500_000, maxDepth: 64, maxChildNodes: 2_000 };

const forbidden = (address: string) => isLoopback(address) || isPrivateAddress(address);

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A DNS lookup that refuses private and loopback addresses (the connection then fails with its message). */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => forbidden(a.address));
    if (bad) return callback(Object.assign(new Error(`${hostname} resolves to a private address (${bad.address})`), { code: 'EPRIVATE' }), []);
    if (options.all) return callback(null, list);
    callback(null, list[0].address, list[0].family);
  });
}

export class WebFetcher {
  private readonly agent: Agent;

  constructor(private readonly allowPrivate = false) {
    this.agent = new Agent({ connections: 16, keepAliveTimeout: 10_000, connect: { timeout: 5_000, ...(allowPrivate ? {} : { lookup: guardedLookup as never }) } });
  }

  /** Why this URL may not be fetched, or null. */
  refusal(u: URL): string | null {
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'only http and https URLs can be fetched';
    if (u.username || u.password) return 'URLs with credentials cannot be fetched';
    const host = hostOf(u);
    if (!this.allowPrivate && (isLoopback(host) || (isIP(host) !== 0 && isPrivateAddress(host)))) return 'private and loopback addresses cannot be fetched';
    return null;
  }

  /** Fetches `raw` and returns its text (at most `maxChars`); throws an Error whose message is fit for the model. */
  async fetch(raw: string, maxChars: number, cancel?: AbortSignal): Promise<FetchedPage> {
    // One deadline for the whole fetch, every redirect and the body included.
    const deadline = AbortSignal.timeout(TOTAL_MS);
    const signal = cancel ? AbortSignal.any([cancel, deadline]) : deadline;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('not an absolute URL');
    }
    for (let hop = 0; ; hop++) {
      const why = this.refusal(url);
      if (why) throw new Error(why);
      let res: Dispatcher.ResponseData;
      try {
        res = await this.agent.request({
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'GET',
          headers: { 'user-agent': 'model-gateway web_fetch', accept: 'text/html,text/plain,application/json;q=0.9,*/*;q=0.1' },
          signal,
          headersTimeout: 15_000,
          bodyTimeout: 15_000,
        });
      } catch (err) {
        if (deadline.aborted) throw new Error(`no complete answer within ${TOTAL_MS / 1000} s`);
        const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
        throw new Error(e.cause?.message ?? e.message);
      }
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
        await res.body.dump().catch(() => undefined); // discards the body (reads at most 128 KiB, then aborts quietly)
        if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
        url = new URL(location, url);
        continue;
      }
      const type = String(res.headers['content-type'] ?? 'application/octet-stream').split(';')[0].trim().toLowerCase();
      if (!TEXT_TYPES.test(type)) {
        await res.body.dump().catch(() => undefined);
        throw new Error(`the page is ${type}, not text`);
      }
      let read: { text: string; cut: boolean };
      try {
        read = await readCapped(res.body, MAX_BYTES);
      } catch (err) {
        if (deadline.aborted) throw new Error(`no complete answer within ${TOTAL_MS / 1000} s`);
        throw err;
      }
      const { text, cut } = read;
      const page: FetchedPage = { url: url.toString(), status: res.statusCode, content_type: type, content: '', truncated: cut };
      let content = text;
      if (type === 'text/html' || type === 'application/xhtml+xml') {
        const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
        if (title) page.title = title;
        // Loaded on the first HTML page, not at start-up: a gateway whose clients never fetch a page keeps it out of the heap.
        const { convert } = await import('html-to-text');
        content = convert(text, { wordwrap: false, selectors: HTML_SELECTORS, limits: HTML_LIMITS });
      }
      if (content.length > maxChars) {
        content = content.slice(0, maxChars);
        page.truncated = true;
      }
      page.content = content;
      return page;
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** The body as text, at most `max` bytes (the rest is not read). */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<{ text: string; cut: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    if (size + b.length > max) {
      parts.push(b.subarray(0, max - size));
      return { text: Buffer.concat(parts).toString('utf8'), cut: true }; // leaving the loop destroys the body
    }
    parts.push(b);
    size += b.length;
  }
  return { text: Buffer.concat(parts).toString('utf8'), cut: false };
}
