#!/usr/bin/env node
/** Executable entry of the `model-gateway` command. */
import { main } from './cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    // `serve` keeps running until a signal; other commands end with their status.
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
