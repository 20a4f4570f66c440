/**
 * `npm run demo`: the gateway wired to the provider simulator, so that a newcomer without any provider key gets a
 * real completion from curl or the OpenAI SDK. Starts the simulator (SIM_PORT, default 9100) and the gateway
 * (PORT, default 8080, data in ./data/demo.db), creates an inference key and prints how to call it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig } from './config.js';
import { createGateway } from './gateway.js';
import { createSimulator } from './sim/index.js';

const SIM_PORT = Number(process.env.SIM_PORT ?? 9100);
const dataDir = resolve('data');
mkdirSync(dataDir, { recursive: true });

const sim = await createSimulator({ port: SIM_PORT });
const simProvider = (slug: string, name: string) => ({ slug, name, protocol: 'openai', base_url: `${sim.url}/${slug}/v1`, no_auth: true, data_policy: { training: false, retains_prompts: false, zdr: true } });
const params = ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'seed', 'tools', 'tool_choice', 'response_format', 'frequency_penalty', 'presence_penalty'];
const configFile = join(dataDir, 'demo-gateway.yaml');
writeFileSync(
  configFile,
  stringify({
    providers: [simProvider('sim-fast', 'Simulator (fast)'), simProvider('sim-cheap', 'Simulator (cheap)')],
    models: [
      { id: 'demo/echo', name: 'Demo Echo', description: 'A simulated model served by two simulated providers.', context_length: 32000 },
      { id: 'demo/embed', name: 'Demo Embed', description: 'A simulated embeddings model (1536 dimensions, shortenable).', context_length: 8192, output_modalities: ['embeddings'] },
      { id: 'demo/whisper', name: 'Demo Whisper', description: 'A simulated speech-to-text model (billed per second of audio).', context_length: 0, input_modalities: ['audio'], output_modalities: ['transcription'] },
    ],
    endpoints: [
      { model: 'demo/echo', provider: 'sim-cheap', upstream_model: 'echo-1', pricing: { prompt: '0.0000001', completion: '0.0000004' }, supported_parameters: params },
      { model: 'demo/echo', provider: 'sim-fast', upstream_model: 'echo-1', pricing: { prompt: '0.0000002', completion: '0.0000008' }, supported_parameters: params },
      { model: 'demo/embed', provider: 'sim-cheap', upstream_model: 'embed-1', pricing: { prompt: '0.00000002', completion: '0' }, supported_parameters: ['dimensions', 'encoding_format', 'user'] },
      { model: 'demo/whisper', provider: 'sim-cheap', upstream_model: 'whisper-1', pricing: { audio_second: '0.0001' }, supported_parameters: ['language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities'] },
    ],
  }),
);

const config = loadConfig({
  GATEWAY_DATABASE_URL: `sqlite:${join(dataDir, 'demo.db')}`,
  ...process.env,
  GATEWAY_CONFIG: configFile,
  GATEWAY_DEFAULT_CATALOG: 'false',
});
const gw = await createGateway(config);
const address = await gw.listen();

// A fresh inference key for the demo, created through the service (the management key may have been printed earlier).
const ws = await gw.svc.workspaces.resolve(undefined);
const { secret } = await gw.svc.keys.create({ name: `demo ${new Date().toISOString()}`, kind: 'inference', workspace_id: ws.id, creator_user_id: null });
const base = `${address.replace('0.0.0.0', 'localhost')}/api/v1`;

process.stdout.write(`
Model Gateway demo is running.
  gateway    ${base}   (simulated upstreams at ${sim.url})
  model      demo/echo  (two simulated providers; the cheaper one is preferred, the other is its fallback)
${gw.bootstrapSecret ? `  management key (shown once): ${gw.bootstrapSecret}\n` : ''}  inference key: ${secret}

Try:
  curl -s ${base}/chat/completions \\
    -H "Authorization: Bearer ${secret}" -H 'content-type: application/json' \\
    -H 'X-Gateway-Metadata: enabled' \\
    -d '{"model":"demo/echo","messages":[{"role":"user","content":"Hello, gateway!"}]}'

Embeddings:
  curl -s ${base}/embeddings \\
    -H "Authorization: Bearer ${secret}" -H 'content-type: application/json' \\
    -d '{"model":"demo/embed","input":["first text","second text"],"dimensions":8}'

Speech to text (any audio file; the simulator makes up a transcript):
  curl -s ${base}/audio/transcriptions -H "Authorization: Bearer ${secret}" \\
    -F model=demo/whisper -F file=@some-audio.wav

Or with the OpenAI SDK:  new OpenAI({ baseURL: '${base}', apiKey: '${secret}' })
Make the cheap provider fail and watch the fallback:  curl -XPOST ${sim.url}/_sim/knobs/sim-cheap -d '{"errorStatus":503}'
Ctrl-C stops both.
`);

const stop = () => {
  gw.close()
    .then(() => sim.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
