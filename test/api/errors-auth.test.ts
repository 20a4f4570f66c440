import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { BACKENDS, createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { expectError, expectStatus, UUID, type Res } from './util.js';

const MANAGEMENT_ONLY = 'Only management keys can perform this operation';

/** Every management operation of the API (the OpenAPI document must list each of them). */
const MANAGEMENT_OPERATIONS = [
  'GET /keys',
  'POST /keys',
  'GET /keys/{hash}',
  'PATCH /keys/{hash}',
  'DELETE /keys/{hash}',
  'GET /workspaces',
  'POST /workspaces',
  'GET /workspaces/{id}',
  'PATCH /workspaces/{id}',
  'DELETE /workspaces/{id}',
  'GET /presets',
  'GET /presets/{slug}',
  'POST /presets/{slug}/responses',
  'POST /presets/{slug}/chat/completions',
  'POST /presets/{slug}/messages',
  'GET /presets/{slug}/versions',
  'GET /presets/{slug}/versions/{version}',
  'GET /organization/members',
  'POST /organization/members',
  'DELETE /organization/members/{id}',
].sort();

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let seq = 0;
/** A request body that is valid for the operation (so that only authentication decides the outcome). */
function bodyFor(op: string): unknown {
  const [method, path] = op.split(' ');
  if (method === 'GET' || method === 'DELETE') return undefined;
  if (path === '/keys') return { name: 'matrix' };
  if (path === '/keys/{hash}') return { name: 'matrix' };
  if (path === '/workspaces') return { name: 'matrix', slug: `matrix-${++seq}` };
  if (path === '/workspaces/{id}') return { name: 'matrix' };
  if (path.startsWith('/presets/')) return { model: 'm/x' };
  if (path === '/organization/members') return { email: `matrix${++seq}@example.com` };
  return {};
}

function fill(path: string): string {
  return path
    .replace('{hash}', '0'.repeat(64))
    .replace('{id}', 'no-such-id')
    .replace('{slug}', 'matrix-preset')
    .replace('{version}', '1');
}

function expectRequestId(res: Res): string {
  const id = res.headers.get('x-request-id');
  expect(id, `x-request-id on ${res.status} ${JSON.stringify(res.body)}`).toBeTruthy();
  return id!;
}

/** fetch on the gateway root (outside /api/v1). */
async function raw(t: TestGateway, method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<Res> {
  const res = await fetch(t.url + path, { method, headers: init.headers, body: init.body });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

const boom = async (app: FastifyInstance) => {
  app.get('/test-boom', { schema: { hide: true } }, async () => {
    throw new Error('database password is hunter2');
  });
  app.get('/test-boom-auth', { config: { auth: 'management' }, schema: { hide: true } }, async () => {
    throw new TypeError('cannot read properties of undefined (reading "hunter2")');
  });
};

describe.each(BACKENDS)('Errors, authentication and protocol (%s)', (backend) => {
  let t: TestGateway;
  let inference: { key: string; hash: string };
  let disabledInference: { key: string; hash: string };
  let disabledManagement: { key: string; hash: string };
  let secondManagement: { key: string; hash: string };
  let doc: any;

  beforeAll(async () => {
    t = await startGateway(backend, { gateway: { extraRoutes: [boom] } });
    inference = await createInferenceKey(t, { name: 'matrix inference' });
    disabledInference = await createInferenceKey(t, { name: 'matrix disabled inference' });
    expectStatus(await t.call('PATCH', `/keys/${disabledInference.hash}`, { body: { disabled: true } }), 200);
    const m1 = await t.call('POST', '/keys', { body: { name: 'matrix management', management: true } });
    secondManagement = { key: m1.body.key, hash: m1.body.data.hash };
    const m2 = await t.call('POST', '/keys', { body: { name: 'matrix disabled management', management: true } });
    disabledManagement = { key: m2.body.key, hash: m2.body.data.hash };
    expectStatus(await t.call('PATCH', `/keys/${disabledManagement.hash}`, { body: { disabled: true } }), 200);
    doc = (await t.call('GET', '/openapi.json', { key: null })).body;
  });
  afterAll(async () => t?.close());

  const documentedOps = (): string[] => {
    const ops: string[] = [];
    for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const m of Object.keys(item)) if (HTTP_METHODS.includes(m) && m !== 'head') ops.push(`${m.toUpperCase()} ${path}`);
    }
    return ops.sort();
  };

  describe('401 and 403 rules for both kinds of key on every management route', () => {
    it('the OpenAPI document lists every management operation (and GET /key, /health, /ready)', () => {
      // Other areas (chat, models, …) add their own operations; every management one must be there.
      expect(documentedOps()).toEqual(expect.arrayContaining([...MANAGEMENT_OPERATIONS, 'GET /key', 'GET /health', 'GET /ready']));
    });

    it('no key, a malformed header, an unknown key or a disabled key (either kind) → 401', async () => {
      for (const op of MANAGEMENT_OPERATIONS) {
        const [method, path] = op.split(' ');
        const url = fill(path);
        const body = bodyFor(op);
        const cases: Array<[string, Record<string, string>, string | null]> = [
          ['no key', {}, null],
          ['not bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, null],
          ['empty bearer', { authorization: 'Bearer ' }, null],
          ['unknown key', {}, 'sk-gw-v1-' + 'f'.repeat(64)],
          ['disabled inference key', {}, disabledInference.key],
          ['disabled management key', {}, disabledManagement.key],
        ];
        for (const [label, headers, key] of cases) {
          const res = await t.call(method, url, { key, headers, body });
          expect(res.status, `${op} with ${label}: ${JSON.stringify(res.body)}`).toBe(401);
          expectError(res, 401);
          expectRequestId(res);
        }
      }
    });

    it(`an inference key → 403 "${MANAGEMENT_ONLY}"`, async () => {
      for (const op of MANAGEMENT_OPERATIONS) {
        const [method, path] = op.split(' ');
        const res = await t.call(method, fill(path), { key: inference.key, body: bodyFor(op) });
        expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(403);
        expectError(res, 403);
        expect(res.body.error.message).toBe(MANAGEMENT_ONLY);
        expectRequestId(res);
      }
    });

    it('a management key passes authentication on every management route (bootstrap and created ones)', async () => {
      for (const key of [t.adminKey, secondManagement.key]) {
        for (const op of MANAGEMENT_OPERATIONS) {
          const [method, path] = op.split(' ');
          const res = await t.call(method, fill(path), { key, body: bodyFor(op) });
          expect([401, 403], `${op}: ${JSON.stringify(res.body)}`).not.toContain(res.status);
          expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
          // The route exists at /api/v1 + the documented path.
          if (res.status === 404) expect(res.body.error.message).not.toMatch(/^No route/);
          expectRequestId(res);
        }
      }
    });

    it('GET /key works for both kinds of key; 401 without a valid, enabled key', async () => {
      const inf = await t.call('GET', '/key', { key: inference.key });
      expectStatus(inf, 200);
      expect(inf.body.data.is_management_key).toBe(false);
      const mgmt = await t.call('GET', '/key', { key: secondManagement.key });
      expectStatus(mgmt, 200);
      expect(mgmt.body.data.is_management_key).toBe(true);
      expectError(await t.call('GET', '/key', { key: null }), 401);
      expectError(await t.call('GET', '/key', { key: 'sk-gw-v1-nope' }), 401);
      expectError(await t.call('GET', '/key', { key: disabledInference.key }), 401, { message: /disabled/ });
      expectError(await t.call('GET', '/key', { key: disabledManagement.key }), 401, { message: /disabled/ });
      // The bearer scheme is case-insensitive.
      expectStatus(await t.call('GET', '/key', { key: null, headers: { authorization: `bearer ${inference.key}` } }), 200);
    });
  });

  describe('error envelope', () => {
    it('unknown route → 404', async () => {
      for (const path of ['/api/v1/nope', '/nope', '/api/v1/keys/abc/extra', '/api/v2/keys']) {
        const res = await raw(t, 'GET', path, { headers: { authorization: `Bearer ${t.adminKey}` } });
        expectError(res, 404, { message: 'No route' });
        expectRequestId(res);
      }
      // Unknown routes answer 404 with or without a key.
      expectError(await t.call('GET', '/does-not-exist', { key: null }), 404);
    });

    it('wrong method on a known path → 405 with Allow', async () => {
      const cases: Array<[string, string, string]> = [
        ['PUT', '/api/v1/keys', 'GET, POST'],
        ['DELETE', '/api/v1/workspaces', 'GET, POST'],
        ['POST', '/api/v1/keys/' + '0'.repeat(64), 'GET, PATCH, DELETE'],
        ['PUT', '/api/v1/presets/some-preset', 'GET'],
        ['GET', '/api/v1/presets/some-preset/responses', 'POST'],
        ['PATCH', '/api/v1/organization/members', 'GET, POST'],
        ['POST', '/health', 'GET'],
      ];
      for (const [method, path, allow] of cases) {
        const res = await raw(t, method, path, { headers: { authorization: `Bearer ${t.adminKey}` } });
        expectError(res, 405, { message: method });
        expect(res.headers.get('allow')).toBe(allow);
        expectRequestId(res);
      }
    });

    it('malformed JSON → 400; a body that is not an object → 400', async () => {
      for (const rawBody of ['{bad', '{"name": "x",}', '[', 'nul']) {
        const res = await t.call('POST', '/workspaces', { raw: rawBody });
        expectError(res, 400, { message: /Malformed/ });
        expectRequestId(res);
      }
      expectError(await t.call('POST', '/workspaces', { raw: '' }), 400);
      expectError(await t.call('POST', '/workspaces', { body: ['name'] }), 400, { field: 'body', rule: 'type' });
      expectError(await t.call('POST', '/workspaces', { body: 'name' }), 400, { field: 'body', rule: 'type' });
    });

    it('an unsupported content type → 415, text/plain included (no route takes text bodies)', async () => {
      expectError(await t.call('POST', '/workspaces', { raw: '<name>x</name>', headers: { 'content-type': 'application/xml' } }), 415);
      expectError(await t.call('POST', '/workspaces', { raw: 'name=x', headers: { 'content-type': 'text/plain' } }), 415);
    });

    it('schema violation → 400 naming the field and the rule (body, query and path)', async () => {
      const body = await t.call('POST', '/workspaces', { body: { name: 'x'.repeat(101), slug: 'ok' } });
      expectError(body, 400, { field: 'name', rule: 'maxLength' });
      expect(body.body.error.message).toBe('name must be at most 100 characters (maxLength)');
      expect(body.body.error.metadata).toEqual({ field: 'name', rule: 'maxLength' });

      const nested = await t.call('POST', '/presets/p/responses', { body: { reasoning: { effort: 'huge' } } });
      expectError(nested, 400, { field: 'reasoning.effort', rule: 'enum' });

      const query = await t.call('GET', '/organization/members?limit=500');
      expectError(query, 400, { field: 'limit', rule: 'maximum' });
      expect(query.body.error.message).toMatch(/^query parameter limit/);

      const param = await t.call('GET', '/presets/-not-a-slug');
      expectError(param, 400, { field: 'slug', rule: 'pattern' });
      expect(param.body.error.message).toMatch(/^params parameter slug|^param/);

      // A key hash that is not hex names no key: 404, as for any unknown hash (the spec lists no 400 there).
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        expectError(await t.call(method, '/keys/NOT-A-HASH', method === 'PATCH' ? { body: { disabled: true } } : {}), 404);
      }
    });

    it('router errors use the envelope too: over-long path parameter → 414, bad URL encoding → 400', async () => {
      const long = await raw(t, 'GET', `/api/v1/workspaces/${'a'.repeat(600)}`, { headers: { authorization: `Bearer ${t.adminKey}` } });
      expectError(long, 414);
      expectRequestId(long);
      const badUrl = await raw(t, 'GET', '/api/v1/workspaces/%E0%A4%A', { headers: { authorization: `Bearer ${t.adminKey}` } });
      expectError(badUrl, 400);
      expectRequestId(badUrl);
    });

    it('an unexpected error → 500 with the detail masked', async () => {
      for (const [path, key] of [
        ['/test-boom', null],
        ['/test-boom-auth', t.adminKey],
      ] as const) {
        const res = await t.call('GET', path, { key });
        expectError(res, 500);
        expect(res.body.error.message).toBe('Internal server error');
        expect(JSON.stringify(res.body)).not.toContain('hunter2');
        expect(res.body.error.metadata).toMatchObject({ error_type: 'server' });
        expect(res.body.error.metadata.request_id).toBe(expectRequestId(res));
      }
    });

    it('unknown body fields on PATCH never reach the database (no 500, no hidden rewrites)', async () => {
      const k = await createInferenceKey(t, { name: 'patch target' });
      const other = await t.call('POST', '/workspaces', { body: { name: 'elsewhere', slug: 'elsewhere' } });
      const res = await t.call('PATCH', `/keys/${k.hash}`, {
        body: { name: 'renamed', workspace_id: other.body.data.id, created_at: '2000-01-01T00:00:00Z', kind: 'management', label: 'x', no_such_column: 1 },
      });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({ name: 'renamed', workspace_id: k.data.workspace_id, created_at: k.data.created_at, expires_at: null, label: k.data.label, is_management_key: false });
      expectStatus(await t.call('GET', '/key', { key: k.key }), 200);
      expectError(await t.call('GET', '/workspaces', { key: k.key }), 403);
    });
  });

  describe('request id', () => {
    it('every response carries x-request-id, unique per request', async () => {
      const responses = [
        await t.call('GET', '/keys'),
        await t.call('POST', '/workspaces', { body: { name: 'rid', slug: 'rid' } }),
        await t.call('GET', '/keys', { key: null }),
        await t.call('GET', '/keys', { key: inference.key }),
        await t.call('GET', '/nope'),
        await t.call('PUT', '/keys'),
        await t.call('POST', '/workspaces', { raw: '{' }),
        await t.call('POST', '/workspaces', { body: {} }),
        await t.call('GET', '/test-boom'),
        await t.call('GET', '/openapi.json', { key: null }),
        await raw(t, 'GET', '/health'),
        await raw(t, 'GET', '/ready'),
      ];
      const ids = responses.map(expectRequestId);
      for (const id of ids) expect(id).toMatch(UUID);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("the caller's own X-Request-Id is echoed (success and errors); an unusable one is replaced", async () => {
      const mine = 'client-req.42:abc_DEF';
      for (const res of [
        await t.call('GET', '/keys', { headers: { 'x-request-id': mine } }),
        await t.call('GET', '/keys', { key: null, headers: { 'x-request-id': mine } }),
        await t.call('GET', '/keys', { key: inference.key, headers: { 'x-request-id': mine } }),
        await t.call('GET', '/nope', { headers: { 'x-request-id': mine } }),
        await t.call('POST', '/workspaces', { body: {}, headers: { 'x-request-id': mine } }),
        await raw(t, 'GET', '/health', { headers: { 'x-request-id': mine } }),
      ]) {
        expect(res.headers.get('x-request-id')).toBe(mine);
      }
      const boomRes = await t.call('GET', '/test-boom', { headers: { 'x-request-id': mine } });
      expect(boomRes.body.error.metadata.request_id).toBe(mine);
      for (const bad of ['has spaces in it', 'x'.repeat(129), 'semi;colon']) {
        const res = await t.call('GET', '/keys', { headers: { 'x-request-id': bad } });
        expect(res.headers.get('x-request-id')).toMatch(UUID);
      }
    });
  });

  describe('health and readiness', () => {
    it('/health → 200 and /ready → 200 without authentication', async () => {
      const health = await raw(t, 'GET', '/health');
      expectStatus(health, 200);
      expect(health.body).toEqual({ status: 'ok' });
      const ready = await raw(t, 'GET', '/ready');
      expectStatus(ready, 200);
      expect(ready.body).toMatchObject({ status: 'ready', checks: { store: true } });
    });
  });

  describe('OpenAPI document', () => {
    it('is served without authentication at /api/v1/openapi.json', async () => {
      const res = await raw(t, 'GET', '/api/v1/openapi.json');
      expectStatus(res, 200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual(doc);
    });

    it('is a well-formed OpenAPI 3.1 document with paths relative to the /api/v1 server', () => {
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(typeof doc.info.title).toBe('string');
      expect(doc.info.version).toBe('1.0.0');
      expect(doc.servers).toEqual([{ url: '/api/v1' }]);
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(doc.security).toEqual([{ bearer: [] }]);

      // Every $ref resolves inside the document.
      const resolve = (ref: string) => ref.slice(2).split('/').reduce((node: any, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      const refs: string[] = [];
      const walk = (node: unknown) => {
        if (Array.isArray(node)) node.forEach(walk);
        else if (node && typeof node === 'object') {
          for (const [k, v] of Object.entries(node)) {
            if (k === '$ref' && typeof v === 'string') refs.push(v);
            else walk(v);
          }
        }
      };
      walk(doc);
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) {
        expect(ref.startsWith('#/'), ref).toBe(true);
        expect(resolve(ref), ref).toBeTypeOf('object');
      }

      const operationIds = new Set<string>();
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        expect(path.startsWith('/'), path).toBe(true);
        expect(path.startsWith('/api/v1'), path).toBe(false);
        const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        for (const [method, op] of Object.entries<any>(item)) {
          if (!HTTP_METHODS.includes(method)) continue;
          const where = `${method.toUpperCase()} ${path}`;
          // Path parameters: every template variable is declared as a required path parameter, and nothing more.
          const pathParams = (op.parameters ?? []).filter((p: any) => p.in === 'path');
          expect(pathParams.map((p: any) => p.name).sort(), where).toEqual([...templated].sort());
          for (const p of pathParams) expect(p.required, where).toBe(true);
          for (const p of op.parameters ?? []) {
            expect(['query', 'header', 'path', 'cookie'], where).toContain(p.in);
            expect(p.schema ?? p.content, where).toBeTruthy();
          }
          // Responses: a success status and the error envelope for errors.
          const statuses = Object.keys(op.responses ?? {});
          expect(statuses.some((s) => /^2\d\d$/.test(s)), where).toBe(true);
          for (const s of statuses) {
            expect(s, where).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
            expect(typeof op.responses[s].description, where).toBe('string');
          }
          if (op.requestBody) expect((op.requestBody.content['application/json'] ?? op.requestBody.content['multipart/form-data'])?.schema, where).toBeTypeOf('object');
          if (op.operationId) {
            expect(operationIds.has(op.operationId), where).toBe(false);
            operationIds.add(op.operationId);
          }
        }
      }
      // Management operations document 401 and 403 with the error envelope.
      for (const op of MANAGEMENT_OPERATIONS) {
        const [method, path] = op.split(' ');
        const o = doc.paths[path][method.toLowerCase()];
        for (const s of ['401', '403']) {
          const schema = o.responses[s]?.content?.['application/json']?.schema;
          expect(schema, `${op} ${s}`).toBeTruthy();
          const env = schema.$ref ? resolve(schema.$ref) : schema;
          expect(env.required, `${op} ${s}`).toContain('error');
          expect(env.properties.error.required).toEqual(['code', 'message']);
        }
      }
      // The health endpoints live outside /api/v1 and need no key.
      for (const p of ['/health', '/ready']) {
        expect(doc.paths[p].get.servers).toEqual([{ url: '/' }]);
        expect(doc.paths[p].get.security).toEqual([]);
      }
      expect(doc.paths['/key'].get).toBeTruthy();
    });

    it('documents the workspace constraints of the spec', () => {
      const schema = doc.paths['/workspaces'].post.requestBody.content['application/json'].schema;
      expect(schema.required.sort()).toEqual(['name', 'slug']);
      expect(schema.properties.name).toMatchObject({ minLength: 1, maxLength: 100 });
      expect(schema.properties.slug).toMatchObject({ minLength: 1, maxLength: 50, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' });
      expect(schema.properties.description.maxLength).toBe(500);
      expect(schema.properties.io_logging_sampling_rate).toMatchObject({ minimum: 0.0001, maximum: 1 });
      const members = doc.paths['/organization/members'].get.parameters;
      const limit = members.find((p: any) => p.name === 'limit');
      expect(limit.schema).toMatchObject({ minimum: 1, maximum: 100, default: 50 });
    });
  });
});

describe.each(BACKENDS)('Body size limit (%s)', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway(backend, { env: { GATEWAY_BODY_LIMIT: '2048' } });
  });
  afterAll(async () => t?.close());

  /** A valid workspace body of exactly `size` bytes. */
  const bodyOf = (size: number, slug: string) => {
    const base = JSON.stringify({ name: 'big', slug, default_text_model: '' });
    return JSON.stringify({ name: 'big', slug, default_text_model: 'm'.repeat(size - base.length) });
  };

  it('accepts a body of exactly GATEWAY_BODY_LIMIT bytes and answers 413 one byte over', async () => {
    const inside = bodyOf(2048, 'inside');
    expect(Buffer.byteLength(inside)).toBe(2048);
    expectStatus(await t.call('POST', '/workspaces', { raw: inside }), 201);
    const outside = bodyOf(2049, 'outside');
    expect(Buffer.byteLength(outside)).toBe(2049);
    const res = await t.call('POST', '/workspaces', { raw: outside });
    expectError(res, 413);
    expectRequestId(res);
    expectError(await t.call('GET', '/workspaces/outside'), 404);
    const huge = await t.call('POST', '/presets/p/responses', { body: { instructions: 'x'.repeat(100_000) } });
    expectError(huge, 413);
  });
});
