import { GatewayMetrics } from '../dist/services/metrics.js';
const m = new GatewayMetrics(null);
const row = { api_type: 'completions', model: 'bench/model', provider_name: 'sim', status: 200, tokens_prompt: 5, tokens_completion: 12, native_tokens_reasoning: 0, native_tokens_cached: 0, total_cost: 0.000029, latency_ms: 3, ttft_ms: 2, attempts: [{ provider: 'sim', model: 'bench/model', status: 200 }] };
for (let r = 0; r < 3; r++) { const N = 1e6; const t = process.hrtime.bigint(); for (let i = 0; i < N; i++) m.observe(row); console.log('ns/observe', Number(process.hrtime.bigint() - t) / N); }
const t = process.hrtime.bigint(); const text = await m.text(); console.log('scrape ms', Number(process.hrtime.bigint() - t) / 1e6, text.length);
