/**
 * Preloaded by bench/instructions.ts (INSTR_GC=1) into a gateway started with --expose-gc: on SIGUSR2, two full
 * collections, so that the counted window does not start with a major collection half done.
 */
'use strict';
process.on('SIGUSR2', () => {
  globalThis.gc();
  globalThis.gc();
});
