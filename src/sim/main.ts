/**
 * CLI: start a provider simulator.
 *   tsx src/sim/main.ts        |  node dist/sim/main.js
 * Environment: SIM_PORT (default 9100), SIM_HOST (default 127.0.0.1),
 * SIM_API_KEY (optional: require `Authorization: Bearer <key>`).
 */
import { createSimulator } from './server.js';

const port = Number(process.env.SIM_PORT ?? 9100);
const host = process.env.SIM_HOST ?? '127.0.0.1';
const sim = await createSimulator({ port, host, apiKey: process.env.SIM_API_KEY || undefined });
console.log(`provider simulator listening on ${sim.url}`);

const stop = (): void => {
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
