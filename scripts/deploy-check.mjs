#!/usr/bin/env node
/**
 * `npm run deploy:check`: what can be checked of the deployment files on a machine without a container engine or
 * Helm (docs/operations.md, "Checks"). Run by .ci/run after `npm test`.
 *
 * 1. The Dockerfile's build, replayed in a clean temporary directory holding only the build context that
 *    .dockerignore admits: npm ci --ignore-scripts, npm rebuild (better-sqlite3 compiled from source), npm run build,
 *    npm prune --omit=dev; then the runtime stage's files alone (package.json, node_modules, dist) in another directory.
 * 2. From that directory: the image's defaults (SQLite), its HEALTHCHECK command, and the compose stack's services as
 *    processes with the environment compose.yaml gives them (service host names mapped to local ports): `migrate`,
 *    `sim`, `gateway-1` and `gateway-2` on one fresh PostgreSQL database and Redis; a key, a chat to each instance, a
 *    spending limit that holds across both, and a draining stop (SIGTERM → exit 0); in front of them nginx with
 *    deploy/nginx.conf when nginx is installed (.ci/run installs it), so that the chats go through the load balancer.
 * 3. Structure of compose.yaml and of the Helm chart (scripts/deploy-structure.mjs); the chart rendered with several
 *    value sets and its manifests checked (scripts/helm-render.mjs, scripts/helm-check.mjs: no Helm binary here).
 *
 * Environment: GATEWAY_TEST_PG_URL, GATEWAY_TEST_REDIS_URL (as the tests), DEPLOY_CHECK_KEEP=1 keeps the directory,
 * DEPLOY_CHECK_APP=<dir> skips the replay and runs a runtime directory built before.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { parse as parseYaml } from 'yaml';
import { checkStructure, composeEnv, interpolate, readDotEnv } from './deploy-structure.mjs';
import { checkHelmChart } from './helm-check.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PG_URL = process.env.GATEWAY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_KEY = `sk-gw-v1-${randomBytes(32).toString('hex')}`;
const started = Date.now();
const children = [];

const log = (msg) => process.stdout.write(`[deploy:check +${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);
function fail(msg) {
  throw new Error(msg);
}

function sh(cmd, args, cwd, env = {}) {
  log(`${cwd === ROOT ? '' : '(build) '}${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed with status ${r.status}`);
}

// ---- 1. The Dockerfile's build, replayed --------------------------------------------------------------------------

/** The build-stage steps, in the Dockerfile's order; the Dockerfile must contain each (kept in step by this check). */
const BUILD_STEPS = [
  { copy: ['package.json', 'package-lock.json', '.npmrc'] },
  { run: ['npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund'] },
  { run: ['npm', 'rebuild', '--no-audit', '--no-fund'] },
  { copy: ['tsconfig.json', 'tsconfig.build.json'] },
  { copy: ['src'] },
  { run: ['npm', 'run', 'build'] },
  { run: ['npm', 'prune', '--omit=dev', '--no-audit', '--no-fund'] },
  { run: ['node', '-e', "require('better-sqlite3')(':memory:').prepare('select 1').get()"] },
];
const RUNTIME_FILES = ['package.json', 'node_modules', 'dist'];

function checkDockerfile() {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  const stages = [...text.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]);
  if (stages.join(',') !== 'build,runtime') fail(`Dockerfile: expected the stages build and runtime, found ${stages.join(', ')}`);
  const [buildStage, runtimeStage] = text.split(/^FROM\s+\S+\s+AS\s+runtime/im);
  for (const step of BUILD_STEPS) {
    if (step.run) {
      const cmd = step.run[0] === 'node' ? `node -e "${step.run[2]}"` : step.run.join(' ');
      if (!buildStage.includes(cmd)) fail(`Dockerfile: the build stage no longer runs "${cmd}" (update scripts/deploy-check.mjs with it)`);
    } else if (!new RegExp(`^COPY ${step.copy.join(' ').replace(/\./g, '\\.')} `, 'm').test(buildStage)) {
      fail(`Dockerfile: the build stage no longer copies ${step.copy.join(' ')}`);
    }
  }
  for (const f of RUNTIME_FILES) if (!new RegExp(`^COPY --from=build /src/${f} `, 'm').test(runtimeStage)) fail(`Dockerfile: the runtime stage does not copy ${f} from the build stage`);
  if (!/^USER node$/m.test(runtimeStage)) fail('Dockerfile: the runtime stage must run as the node user');
  if (!/^HEALTHCHECK .*\/health/m.test(runtimeStage)) fail('Dockerfile: no HEALTHCHECK on /health');
  if (/--omit=dev|prune/.test(runtimeStage) || /npm (ci|install)/.test(runtimeStage)) fail('Dockerfile: the runtime stage must not install anything');
  const health = /^HEALTHCHECK .*CMD (\[.*\])$/m.exec(runtimeStage);
  const env = Object.fromEntries([...runtimeStage.matchAll(/^ENV (.+)$/gm)].flatMap((m) => [...m[1].matchAll(/(\w+)=(\S+)/g)].map((x) => [x[1], x[2]])));
  return { healthcheck: JSON.parse(health[1]), env };
}

/** The files .dockerignore admits (its form: `**`, then `!path` exceptions). */
function buildContext() {
  const lines = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (lines[0] !== '**') fail('.dockerignore: expected to start with ** (exclude everything) and name what enters');
  return lines.slice(1).map((l) => {
    if (!l.startsWith('!')) fail(`.dockerignore: only !exceptions are expected after **, found ${l}`);
    return l.slice(1).replace(/\/\*\*$/, '');
  });
}

function replayBuild(work) {
  const context = buildContext();
  for (const step of BUILD_STEPS) for (const f of step.copy ?? []) if (!context.includes(f)) fail(`.dockerignore keeps ${f} out of the build context, but the Dockerfile copies it`);
  const build = join(work, 'build');
  mkdirSync(build);
  for (const step of BUILD_STEPS) {
    if (step.copy) for (const f of step.copy) cpSync(join(ROOT, f), join(build, f), { recursive: true });
    else sh(step.run[0], step.run.slice(1), build);
  }
  const app = join(work, 'app');
  mkdirSync(app);
  for (const f of RUNTIME_FILES) cpSync(join(build, f), join(app, f), { recursive: true, verbatimSymlinks: true });
  const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  const leftovers = Object.keys(pkg.devDependencies ?? {}).filter((d) => existsSync(join(app, 'node_modules', d)));
  if (leftovers.length) fail(`dev dependencies left in the runtime stage: ${leftovers.join(', ')}`);
  if (!existsSync(join(app, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'))) fail('better-sqlite3 was not compiled');
  log(`runtime stage: ${Object.keys(pkg.dependencies).length} production dependencies, no dev dependency`);
  return app;
}

// ---- 2. Running it ---------------------------------------------------------------------------------------------------

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

function start(name, args, cwd, env, work, program = process.execPath) {
  const out = openSync(join(work, `${name}.log`), 'w');
  const child = spawn(program, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', out, out] });
  child.exitCode_ = new Promise((res) => child.once('exit', (code, signal) => res(code ?? signal)));
  child.name = name;
  child.logFile = join(work, `${name}.log`);
  children.push(child);
  return child;
}

async function waitReady(url, child, ms = 30_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (child.exitCode !== null) fail(`${child.name} exited (${child.exitCode}):\n${readFileSync(child.logFile, 'utf8').slice(-3000)}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  fail(`${child.name}: ${url} not ready after ${ms} ms:\n${readFileSync(child.logFile, 'utf8').slice(-3000)}`);
}

async function stop(child, graceMs = 40_000) {
  child.kill('SIGTERM');
  const code = await Promise.race([child.exitCode_, new Promise((r) => setTimeout(() => r('timeout'), graceMs))]);
  if (code !== 0) fail(`${child.name}: SIGTERM → ${code} instead of a clean exit 0:\n${readFileSync(child.logFile, 'utf8').slice(-3000)}`);
}

async function call(base, method, path, key, body) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, instance: res.headers.get('x-gateway-instance') };
}

/** nginx with deploy/nginx.conf (service names mapped to the local instances), when nginx is on this machine. */
async function loadBalancer(instances, work) {
  const nginx = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (!nginx) {
    log('nginx is not installed here (apt-get install nginx-light): the load balancer is left out');
    return null;
  }
  const port = await freePort();
  let site = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8').replace(/listen 8080;/, `listen 127.0.0.1:${port};`);
  instances.forEach((i, k) => (site = site.replace(`server gateway-${k + 1}:8080`, `server ${new URL(i.base).host}`)));
  const dir = join(work, 'nginx');
  mkdirSync(dir);
  writeFileSync(join(dir, 'site.conf'), site);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${join(dir, t)};`).join('\n  ');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${process.getuid?.() === 0 ? 'user root;\n' : ''}daemon off;\nworker_processes 1;\npid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'error.log')} warn;\n` +
      `events { worker_connections 256; }\nhttp {\n  access_log off;\n  ${temp}\n  include ${join(dir, 'site.conf')};\n}\n`,
  );
  const child = start('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], dir, {}, work, nginx);
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/ready`, child, 15_000);
  return { child, base };
}

/** The image's defaults: SQLite in the data directory, HEALTHCHECK's own command. */
async function imageDefaults(app, work, docker) {
  const port = await freePort();
  const env = { ...docker.env, PORT: String(port), HOST: '127.0.0.1', GATEWAY_DATABASE_URL: docker.env.GATEWAY_DATABASE_URL.replace('/data/', `${join(work, 'data')}/`), GATEWAY_LOG_LEVEL: 'warn' };
  const gw = start('image-sqlite', ['dist/bin.js', 'serve'], app, env, work);
  await waitReady(`http://127.0.0.1:${port}/ready`, gw);
  const [cmd, ...args] = docker.healthcheck;
  if (cmd !== 'node') fail('HEALTHCHECK is expected to run node (the image has no curl)');
  const hc = spawnSync(process.execPath, args, { cwd: app, env: { PATH: process.env.PATH, PORT: String(port) }, timeout: 30_000 });
  if (hc.status !== 0) fail(`the image's HEALTHCHECK command failed (${hc.status}): ${hc.stderr}`);
  if (!existsSync(join(work, 'data', 'gateway.db'))) fail('the SQLite database was not created in the data directory');
  // The web console is built into the image (dist/console) and served at /console with its hashed assets.
  const page = await fetch(`http://127.0.0.1:${port}/console`);
  const html = await page.text();
  const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html);
  if (page.status !== 200 || !script) fail(`the image does not serve the console at /console (${page.status})`);
  const asset = await fetch(`http://127.0.0.1:${port}${script[1]}`);
  if (asset.status !== 200 || !/immutable/.test(asset.headers.get('cache-control') ?? '')) fail(`the console's assets are not served with a long cache (${asset.status})`);
  await stop(gw);
  log('image defaults: SQLite in the data volume, /ready 200, HEALTHCHECK exits 0, /console served, SIGTERM → exit 0');
}

async function freshPg() {
  const name = `gw_deploy_check_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** compose.yaml's services as processes: its environment, with service host names mapped to this machine. */
async function composeStack(app, work) {
  const deploy = join(ROOT, 'deploy');
  const compose = parseYaml(readFileSync(join(deploy, 'compose.yaml'), 'utf8'), { merge: true });
  const vars = { ...readDotEnv(join(deploy, '.env')), GATEWAY_ADMIN_KEY: ADMIN_KEY };
  const db = await freshPg();
  try {
    const simPort = await freePort();
    // The config file compose mounts (GATEWAY_CONFIG_FILE from .env: the demo's), with the sim service's address mapped.
    const mounted = interpolate(compose.services['gateway-1'].volumes[0], vars).split(':')[0];
    const configText = readFileSync(join(deploy, mounted), 'utf8').replaceAll('http://sim:9100', `http://127.0.0.1:${simPort}`);
    const configFile = join(work, 'gateway.yaml');
    writeFileSync(configFile, configText);
    const local = (env) => ({
      ...env,
      GATEWAY_DATABASE_URL: db.url,
      GATEWAY_REDIS_URL: env.GATEWAY_REDIS_URL.replace('redis://redis:6379', REDIS_URL),
      GATEWAY_CONFIG: configFile,
    });

    const migrateEnv = local(composeEnv(compose.services.migrate, vars));
    const m = start('migrate', ['dist/bin.js', ...compose.services.migrate.command], app, migrateEnv, work);
    if ((await m.exitCode_) !== 0) fail(`the migrate service failed:\n${readFileSync(m.logFile, 'utf8')}`);
    log(`migrate service: ${readFileSync(m.logFile, 'utf8').trim().split('\n').pop()}`);

    const simEnv = { ...composeEnv(compose.services.sim, vars), SIM_HOST: '127.0.0.1', SIM_PORT: String(simPort) };
    const sim = start('sim', compose.services.sim.entrypoint.slice(1), app, simEnv, work);
    await waitReady(`http://127.0.0.1:${simPort}/_sim/health`, sim);

    const instances = [];
    for (const name of ['gateway-1', 'gateway-2']) {
      const port = await freePort();
      const env = { ...local(composeEnv(compose.services[name], vars)), PORT: String(port), HOST: '127.0.0.1' };
      if (env.GATEWAY_MIGRATE !== 'off') fail(`${name}: expected GATEWAY_MIGRATE=off (the migrate service applies them)`);
      const child = start(name, ['dist/bin.js', 'serve'], app, env, work);
      instances.push({ child, base: `http://127.0.0.1:${port}` });
    }
    for (const i of instances) await waitReady(`${i.base}/ready`, i.child);
    log('compose stack: migrate, sim, gateway-1 and gateway-2 up on one PostgreSQL database and Redis');

    const lb = await loadBalancer(instances, work);
    const entry = lb?.base ?? instances[0].base;
    const key = await call(entry, 'POST', '/keys', ADMIN_KEY, { name: 'deploy check', limit: 1 });
    if (key.status !== 201) fail(`creating a key: ${key.status} ${JSON.stringify(key.body)}`);
    const chat = (base, k) => call(base, 'POST', '/chat/completions', k, { model: 'demo/echo', messages: [{ role: 'user', content: 'Hello through the deployment' }] });
    // Through the load balancer, consecutive requests go to each instance in turn (X-Gateway-Instance names it);
    // without nginx on this machine, each instance is called directly.
    const targets = lb ? [lb.base, lb.base] : instances.map((i) => i.base);
    const seen = new Set();
    for (const base of targets) {
      const r = await chat(base, key.body.key);
      if (r.status !== 200 || !r.body.choices?.[0]?.message?.content) fail(`chat through ${base}: ${r.status} ${JSON.stringify(r.body)}`);
      seen.add(r.instance ?? base);
    }
    if (seen.size !== 2) fail(`the two chats reached ${[...seen].join(', ')}: expected both instances`);
    log(`one key, one chat to each instance ${lb ? 'through nginx with deploy/nginx.conf' : 'directly (no nginx here)'}: 200 from ${[...seen].join(' and ')}`);

    // Room for exactly one request (docs/spend.md): each reserves its maximum cost before the upstream call — at
    // sim-cheap's prices, the prompt's byte bound (about 45 tokens) at $0.0000001 per token plus max_tokens 20 at
    // $0.0000004, about $0.0000125 — and settles to what it cost (at least a few tokens, over $0.000001). A $0.0000135
    // limit admits the first; what it cost leaves less room than a second one's maximum, on either instance, so both
    // refuse (402) and spend never passes the limit.
    const tight = await call(entry, 'POST', '/keys', ADMIN_KEY, { name: 'deploy check: tight limit', limit: 0.0000135 });
    const order = lb ? [lb.base, lb.base, lb.base] : [instances[0].base, instances[1].base, instances[0].base];
    const limited = (base, k) => call(base, 'POST', '/chat/completions', k, { model: 'demo/echo', max_tokens: 20, provider: { only: ['sim-cheap'] }, messages: [{ role: 'user', content: 'Hello through the deployment' }] });
    const results = [];
    for (const base of order) results.push(await limited(base, tight.body.key));
    const statuses = results.map((r) => r.status);
    const refusers = new Set(results.slice(1).map((r, i) => r.instance ?? order[i + 1]));
    if (statuses.join() !== '200,402,402' || refusers.size !== 2) fail(`spending limit across instances: ${statuses.join(', ')} from ${results.map((r) => r.instance).join(', ')} (expected 200, then 402 from each instance): ${JSON.stringify(results.map((r) => r.body?.error?.message ?? null))}`);
    log(`spending limit of $0.0000135 holds across both: 200 ($${results[0].body.usage?.cost}), then 402 from each instance`);

    if (lb) await stop(lb.child, 10_000);
    for (const i of instances) await stop(i.child);
    await stop(sim);
    log('SIGTERM: both instances and the simulator exit 0');
  } finally {
    await db.drop();
  }
}

// ---- main --------------------------------------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'gw-deploy-check-'));
let ok = false;
try {
  checkStructure(ROOT, log);
  const docker = checkDockerfile();
  log('Dockerfile: two stages, build steps as replayed here, runtime as node with production dependencies only');
  // DEPLOY_CHECK_APP=<dir>: reuse a runtime directory built before (while working on this script), no replay.
  const app = process.env.DEPLOY_CHECK_APP ? resolve(process.env.DEPLOY_CHECK_APP) : replayBuild(work);
  // The built gateway's own config validation, for the chart's ConfigMap and compose's config files.
  const { loadConfig } = await import(pathToFileURL(join(app, 'dist', 'config.js')).href);
  for (const f of ['gateway.yaml', 'demo.yaml']) loadConfig({ GATEWAY_CONFIG: join(ROOT, 'deploy', f) });
  const docs = checkHelmChart(join(ROOT, 'deploy', 'helm', 'model-gateway'), loadConfig);
  log(`Helm chart rendered with 3 value sets (${docs} documents): selectors, probes, ports, volumes, Secret references, hooks and the config file check out`);
  await imageDefaults(app, work, docker);
  await composeStack(app, work);
  ok = true;
  log(`all checks passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
} catch (err) {
  process.stderr.write(`\ndeploy:check FAILED: ${err.message}\n(logs in ${work})\n`);
  process.exitCode = 1;
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (ok && !process.env.DEPLOY_CHECK_KEEP) rmSync(work, { recursive: true, force: true });
}
