/**
 * Runs fuzz cases against a gateway and judges each answer: never a 5xx, and every error body in an envelope — the
 * gateway's `{error: {code, message}}` or, on the Anthropic routes, `{type: "error", error: {type, message}}`.
 */
import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { caseArb, type Fixtures, type FuzzCase, type Operation } from './cases.js';
import type { ArbContext, Schema } from './schema-arb.js';

export interface FuzzReport {
  cases: number;
  byStatus: Record<number, number>;
  /** Statuses per operation (`METHOD path`). */
  byOperation: Record<string, Record<number, number>>;
  failures: Array<{ case: string; status: number; body: string }>;
}

/** Every operation of the served document, with its absolute path. */
export function operations(doc: Schema): Operation[] {
  const base = (doc.servers?.[0]?.url as string | undefined) ?? '';
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const servers = (op.servers ?? item.servers) as Array<{ url: string }> | undefined;
      const prefix = servers?.[0]?.url ?? base;
      out.push({ method, path: `${prefix === '/' ? '' : prefix}${path}`, op });
    }
  }
  return out;
}

/** One raw HTTP request (undici's fetch refuses some of the hostile headers and bodies a client can send). */
function send(origin: URL, c: FuzzCase): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: origin.hostname, port: origin.port, method: c.method, path: c.url, headers: { ...c.headers, ...(c.body !== undefined ? { 'content-length': Buffer.byteLength(c.body) } : {}) }, insecureHTTPParser: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.length;
          if (size < 1_000_000) chunks.push(d);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), type: String(res.headers['content-type'] ?? '') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.end(c.body);
  });
}

function inEnvelope(status: number, text: string): boolean {
  try {
    const b = JSON.parse(text);
    if (!b || typeof b !== 'object' || !b.error || typeof b.error.message !== 'string') return false;
    return b.error.code === status || b.type === 'error';
  } catch {
    return false;
  }
}

export async function fuzz(gatewayUrl: string, doc: Schema, ctx: ArbContext, fx: Fixtures, opts: { seed: number; cases: number; concurrency: number }): Promise<FuzzReport> {
  const origin = new URL(gatewayUrl);
  const ops = operations(doc);
  // Which key each route takes: an inference key answered 403 means a management route.
  fx.keyOf ??= {};
  for (const o of ops) {
    let url = o.path;
    for (const p of (o.op.parameters ?? []) as Schema[]) if (p.in === 'path') url = url.replace(`{${p.name}}`, fx.params[p.name]?.[0] ?? 'x');
    const probe = await send(origin, { method: o.method.toUpperCase(), url, headers: { authorization: `Bearer ${fx.keys[0]}`, 'content-type': 'application/json' }, body: o.op.requestBody ? '{}' : undefined, label: 'probe' });
    fx.keyOf[`${o.method.toUpperCase()} ${o.path}`] = probe.status === 403 ? 1 : 0;
  }
  const perOp = Math.max(1, Math.ceil(opts.cases / ops.length));
  const all: Array<FuzzCase & { op: string }> = [];
  ops.forEach((o, i) => all.push(...fc.sample(caseArb(o, ctx, fx), { seed: opts.seed + i, numRuns: perOp }).map((c) => ({ ...c, op: `${o.method.toUpperCase()} ${o.path}` }))));
  // Interleave operations so that a destructive case does not starve one route of all its later cases.
  const order = fc.sample(fc.shuffledSubarray(all.map((_, i) => i), { minLength: all.length, maxLength: all.length }), { seed: opts.seed, numRuns: 1 })[0];
  const report: FuzzReport = { cases: 0, byStatus: {}, byOperation: {}, failures: [] };
  let next = 0;
  const worker = async () => {
    while (next < order.length) {
      const c = all[order[next++]];
      let res: { status: number; body: string; type: string };
      try {
        res = await send(origin, c);
      } catch (err) {
        // A reset is acceptable only when the client sent what no server may take (over-large headers are answered 431).
        report.failures.push({ case: `${c.method} ${c.url.slice(0, 200)} [${c.label}]`, status: 0, body: String(err) });
        continue;
      }
      report.cases++;
      report.byStatus[res.status] = (report.byStatus[res.status] ?? 0) + 1;
      const per = (report.byOperation[c.op] ??= {});
      per[res.status] = (per[res.status] ?? 0) + 1;
      const bad = res.status >= 500 || (res.status >= 400 && !inEnvelope(res.status, res.body));
      if (bad) report.failures.push({ case: `${c.method} ${c.url.slice(0, 200)} [${c.label.slice(0, 200)}] body=${typeof c.body === 'string' ? c.body.slice(0, 200) : c.body ? '<bytes>' : '-'}`, status: res.status, body: res.body.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return report;
}
