/** Helpers shared by the benchmark scripts (run.ts, pair.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitUp(url: string, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await request(url, { method: 'GET' });
      await r.body.dump();
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`not up: ${url}`);
}

/** CPU seconds (user + system) and peak RSS (MB) of a process, from /proc. */
export function procStats(pid: number): { cpu: number; hwmMb: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = 100;
  const cpu = (Number(f[11]) + Number(f[12])) / ticks;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpu, hwmMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

/**
 * A gateway config file routing `bench/model` to the simulator at `simBase` (…/v1) as an OpenAI-compatible upstream,
 * `bench/claude` as an Anthropic one and `bench/responses` as a Responses one; returns its path.
 */
export function writeGatewayConfig(dir: string, simBase: string): string {
  const file = join(dir, 'gateway.yaml');
  writeFileSync(
    file,
    [
      'providers:',
      `  - { slug: sim, name: Simulator, protocol: openai, base_url: "${simBase}", no_auth: true }`,
      `  - { slug: sim-anthropic, name: Simulator (Anthropic), protocol: anthropic, base_url: "${simBase}", no_auth: true }`,
      `  - { slug: sim-responses, name: Simulator (Responses), protocol: openai-responses, base_url: "${simBase}", no_auth: true }`,
      'models:',
      '  - { id: bench/model, name: Bench model, context_length: 4000000 }',
      '  - { id: bench/claude, name: Bench model (Messages API upstream), context_length: 4000000 }',
      '  - { id: bench/responses, name: Bench model (Responses API upstream), context_length: 4000000 }',
      'endpoints:',
      '  - { model: bench/model, provider: sim, upstream_model: bench-model, pricing: { prompt: "0.000001", completion: "0.000002" } }',
      '  - { model: bench/claude, provider: sim-anthropic, upstream_model: bench-model, pricing: { prompt: "0.000001", completion: "0.000002" } }',
      '  - { model: bench/responses, provider: sim-responses, upstream_model: bench-model, pricing: { prompt: "0.000001", completion: "0.000002" } }',
    ].join('\n'),
  );
  return file;
}
