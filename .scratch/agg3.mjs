import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8')); const N = Number(process.argv[3]); const re = new RegExp(process.argv[4]);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < p.samples.length; i++) { const d = p.timeDeltas[i] ?? 0; self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + d); }
const fns = new Map();
for (const [id, t] of self) { const n = byId.get(id); if (!re.test(n.callFrame.url)) continue; const f = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; fns.set(f, (fns.get(f) ?? 0) + t); }
for (const [c, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((t / N).toFixed(2).padStart(6), c);
