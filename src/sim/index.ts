/** Public entry of the provider simulator. */
export { createSimulator, type LoggedRequest, type ProviderStats, type Simulator, type SimulatorOptions } from './server.js';
export { KNOB_NAMES, knobHeader, type KnobName, type KnobPatch, type Knobs } from './knobs.js';
export type { Endpoint, EndpointContext, Protocol, Reply } from './protocol.js';
export { trustServiceAccount } from './vertex.js';
export { simSecretFor } from './sigv4.js';
