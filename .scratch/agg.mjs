import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; let total = 0;
for (let i = 0; i < p.samples.length; i++) { const d = dt[i] ?? 0; self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + d); total += d; }
const cat = (u) => !u ? 'native/(vm)' : u.includes('/dist/') && !u.includes('node_modules') ? 'gateway' : u.match(/node_modules\/(@[^/]+\/[^/]+|[^/]+)/)?.[1] ?? (u.startsWith('node:') ? 'node:' + u.slice(5).split('/')[0] : u);
const cats = new Map(), fns = new Map();
for (const [id, t] of self) { const n = byId.get(id); const u = n.callFrame.url; const c = cat(u); cats.set(c, (cats.get(c) ?? 0) + t);
  const f = `${n.callFrame.functionName || '(anon)'} ${u.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; fns.set(f, (fns.get(f) ?? 0) + t); }
const pct = (t) => (100 * t / total).toFixed(1).padStart(5);
console.log('total ms', (total / 1000).toFixed(0));
for (const [c, t] of [...cats].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(pct(t), c);
console.log('---');
for (const [c, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 50))) console.log(pct(t), c);
