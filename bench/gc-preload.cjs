/**
 * Preloaded by bench/gc.ts (GC_FORCED=1) into a target started with --expose-gc: on SIGUSR2, 20 full collections of
 * the process's heap as it is then, timed (main-thread CPU and wall clock), with the heap's size and object count
 * written as JSON to GC_FORCED_OUT.
 */
'use strict';
const { writeFileSync } = require('node:fs');
const v8 = require('node:v8');

process.on('SIGUSR2', () => {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const n = 20;
  for (let i = 0; i < n; i++) globalThis.gc();
  const c = process.cpuUsage(c0);
  const wall = (performance.now() - w0) / n;
  const h = v8.getHeapStatistics();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, +(s.space_used_size / 1e6).toFixed(2)]));
  writeFileSync(process.env.GC_FORCED_OUT, JSON.stringify({ cpuMs: (c.user + c.system) / 1000 / n, wallMs: wall, usedMb: h.used_heap_size / 1e6, externalMb: h.external_memory / 1e6, spaces }));
});
