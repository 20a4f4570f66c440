// µs per request by category and top functions: node agg2.mjs profile requests [n]
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8')); const N = Number(process.argv[3]);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map(); let total = 0;
for (let i = 0; i < p.samples.length; i++) { const d = p.timeDeltas[i] ?? 0; self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + d); total += d; }
const cat = (n) => { const u = n.callFrame.url; const f = n.callFrame.functionName; if (!u) return f.startsWith('(') ? f : 'native:' + f;
  return u.includes('/dist/') && !u.includes('node_modules') ? 'gateway:' + u.split('/dist/')[1] : u.match(/node_modules\/(@[^/]+\/[^/]+|[^/]+)/)?.[1] ?? (u.startsWith('node:') ? 'node:' + u.slice(5).split('/')[0] : u); };
const cats = new Map(), fns = new Map();
for (const [id, t] of self) { const n = byId.get(id); const c = cat(n); cats.set(c, (cats.get(c) ?? 0) + t);
  const f = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; fns.set(f, (fns.get(f) ?? 0) + t); }
const us = (t) => (t / N).toFixed(1).padStart(6);
console.log('total µs/req', us(total), 'non-idle', us(total - (cats.get('(idle)') ?? 0)));
let g = 0; for (const [c, t] of cats) if (c.startsWith('gateway:')) g += t; console.log('gateway own', us(g));
for (const [c, t] of [...cats].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[4] ?? 40))) console.log(us(t), c);
console.log('---');
for (const [c, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[5] ?? 40))) console.log(us(t), c);
