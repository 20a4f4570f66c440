/**
 * Bearer authentication. Each route declares who may call it in `config.auth`:
 * `management` (management keys only), `inference` (inference keys only, the model operations) or `any`.
 * Runs in onRequest, before the body is parsed, so an unauthenticated caller costs no parsing. A key with a rate limit
 * (its own, or an inference key's guardrails') has each request it is allowed to make counted here; over a limit, 429.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, MANAGEMENT_ONLY, type HttpError } from '../../core/errors.js';
import type { KeyService } from '../../services/keys.js';
import type { RateLimiter } from '../../services/rate-limits.js';
import type { KeyRow } from '../../store/types.js';

export type AuthRule = 'management' | 'inference' | 'any' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRule;
    /** false: the route's requests do not count against the key's rate limit (free operations, e.g. token counts). */
    rateLimit?: boolean;
    /** true: the key may also come as the `?key=` query parameter (the Gemini API's convention). */
    queryKey?: boolean;
  }
  interface FastifyRequest {
    key: KeyRow;
  }
}

/** `key=` of a query string (the Gemini API's `?key=`), when there is one. */
function queryKey(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  const v = new URLSearchParams(url.slice(q + 1)).get('key');
  return v && !/\s/.test(v) ? v : undefined;
}

/**
 * `Authorization: Bearer <key>`; or `x-api-key: <key>`, which the Anthropic SDK sends by default; or
 * `x-goog-api-key: <key>`, which the Google Gen AI SDK and Gemini CLI send; or `?key=` on routes that allow it.
 */
function bearer(request: FastifyRequest, allowQuery: boolean): string | undefined {
  const h = request.headers.authorization;
  if (!h) {
    const x = request.headers['x-api-key'] ?? request.headers['x-goog-api-key'];
    if (typeof x === 'string' && x.length > 0) return /\s/.test(x) ? undefined : x;
    return allowQuery ? queryKey(request.url) : undefined;
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

function allow(rule: AuthRule, key: KeyRow): HttpError | null {
  if (rule === 'management' && key.kind !== 'management') return forbidden(MANAGEMENT_ONLY);
  if (rule === 'inference' && key.kind !== 'inference') return forbidden('Management keys cannot call models; use an inference key');
  return null;
}

export function registerAuth(app: FastifyInstance, keys: KeyService, limits: RateLimiter): void {
  app.decorateRequest('key', null as unknown as KeyRow);
  // Callback style, and no promise when the key is cached: this runs on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    // `routeOptions` builds a new object on every read: read it once.
    const config = request.routeOptions.config;
    const rule = config?.auth ?? 'none';
    if (rule === 'none') return done();
    const finish = (key: KeyRow) => {
      const refused = allow(rule, key);
      if (refused) return done(refused);
      request.key = key;
      if (config?.rateLimit === false) return done();
      // The key's own rate limit and, for an inference key, its guardrails' (null: admitted, nothing awaited).
      const limited = limits.check(key);
      if (limited === null) return done();
      if (limited instanceof Promise) limited.then((e) => done(e ?? undefined), done);
      else done(limited);
    };
    let found: KeyRow | Promise<KeyRow>;
    try {
      found = keys.authenticate(bearer(request, config?.queryKey === true));
    } catch (err) {
      return done(err as Error);
    }
    if (found instanceof Promise) found.then(finish, done);
    else finish(found);
  });
}
