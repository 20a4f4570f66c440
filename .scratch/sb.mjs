import pino from 'pino';
const d = pino.destination({ dest: 1, sync: false, minLength: 4096, contentMode: 'buffer' });
const line = '{"level":30,"time":"2026-11-22T21:00:00.000Z","service":"model-gateway","request_id":"123e4567-e89b-12d3-a456-426614174000","method":"POST","url":"/api/v1/chat/completions","status":200,"ms":0.85,"key":"abcdef012345","workspace":"ws"}\n';
let n = 0; const N = 200000; const t0 = process.hrtime.bigint();
let writes = 0; const fs = await import('node:fs');
function step() { for (let i = 0; i < 100; i++) d.write(Buffer.from(line)); n += 100; if (n < N) setImmediate(step); else { const t = Number(process.hrtime.bigint() - t0) / N; const cpu = process.cpuUsage(); console.error('ns/line wall', t.toFixed(0), 'cpu us/line', ((cpu.user + cpu.system) / N).toFixed(2)); } }
step();
