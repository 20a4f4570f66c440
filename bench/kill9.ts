/**
 * The kill -9 loss window against the record flush interval (issue 16 item 6; docs/operations.md): for each backend
 * and GATEWAY_RECORD_FLUSH_MS, a gateway in a child process under plain chat load is killed with SIGKILL, and the
 * answered requests missing from the database are counted, with the gateway's CPU per request and its write cost.
 *
 *   npm run kill9:measure [-- --intervals 100,500,1000 --backends sqlite,postgres --concurrency 16 --load-ms 4000 --runs 1]
 */
import { runKill9, type Kill9Result } from '../test/hostile/kill9-harness.js';
import type { Backend } from '../test/helpers.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1];
}

const intervals = arg('intervals', '100,500,1000').split(',').map(Number);
const backends = arg('backends', 'sqlite,postgres').split(',') as Backend[];
const concurrency = Number(arg('concurrency', '16'));
const loadMs = Number(arg('load-ms', '4000'));
const runs = Number(arg('runs', '1'));

const rows: Kill9Result[] = [];
for (const backend of backends) {
  for (const flushMs of intervals) {
    for (let i = 0; i < runs; i++) {
      const r = await runKill9({ backend, flushMs, concurrency, loadMs });
      rows.push(r);
      console.log(JSON.stringify(r));
    }
  }
}
console.log('\n| backend | flush ms | answered | lost | lost window ms | lost / s of load | gateway CPU µs/request | commits/s | bytes written/request |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const rate = ((r.answered * 1000) / r.loadMs).toFixed(0);
  console.log(`| ${r.backend} | ${r.flushMs} | ${r.answered} (${rate}/s) | ${r.lost} | ${r.windowMs} | ${((r.lost * 1000) / r.loadMs).toFixed(1)} | ${r.cpuUsPerRequest} | ${r.commitsPerSecond ?? '–'} | ${r.bytesWrittenPerRequest ?? '–'} |`);
}
