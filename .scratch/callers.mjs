import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const re = new RegExp(process.argv[3]);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map(); let total = 0;
for (let i = 0; i < p.samples.length; i++) { const d = p.timeDeltas[i] ?? 0; self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + d); total += d; }
const stacks = new Map();
for (const [id, t] of self) { const n = byId.get(id); if (!re.test(n.callFrame.functionName)) continue;
  const chain = []; let cur = parent.get(id); let depth = 0; while (cur && depth < Number(process.argv[4] ?? 6)) { const c = byId.get(cur).callFrame; chain.push(`${c.functionName || '(anon)'}@${c.url.split('/').slice(-1)[0]}:${c.lineNumber}`); cur = parent.get(cur); depth++; }
  const k = chain.join(' < '); stacks.set(k, (stacks.get(k) ?? 0) + t); }
for (const [k, t] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log((100 * t / total).toFixed(2), k);
