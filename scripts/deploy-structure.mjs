/**
 * Structure checks of deploy/compose.yaml and the Helm chart, for `npm run deploy:check` (no container engine or
 * Helm binary needed). Each finding names the file and what is wrong.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** KEY=value lines (compose's .env). */
export function readDotEnv(path) {
  if (!existsSync(path)) return {};
  const out = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].trim();
  }
  return out;
}

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}. */
export function interpolate(value, vars) {
  return String(value).replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (_, name, colon, op, arg) => {
    const v = vars[name];
    const missing = v === undefined || (colon === ':' && v === '');
    if (op === '?' && missing) throw new Error(`compose: ${name} is required (${arg})`);
    if (op === '-' && missing) return arg;
    return v ?? '';
  });
}

/** A service's environment after interpolation (map or list form). */
export function composeEnv(service, vars) {
  const env = service.environment ?? {};
  const pairs = Array.isArray(env) ? env.map((e) => String(e).split(/=(.*)/s).slice(0, 2)) : Object.entries(env);
  return Object.fromEntries(pairs.map(([k, v]) => [k, interpolate(v ?? '', vars)]));
}

function checkCompose(root, problems) {
  const dir = join(root, 'deploy');
  const compose = parseYaml(readFileSync(join(dir, 'compose.yaml'), 'utf8'), { merge: true });
  const vars = readDotEnv(join(dir, '.env'));
  const s = compose.services ?? {};
  const need = ['postgres', 'redis', 'migrate', 'gateway-1', 'gateway-2', 'lb', 'sim'];
  for (const n of need) if (!s[n]) problems.push(`compose.yaml: no service ${n}`);
  if (problems.length) return;
  const official = { postgres: /^postgres:\d/, redis: /^redis:\d/, lb: /^(nginx|caddy):\d/ };
  for (const [n, re] of Object.entries(official)) if (!re.test(s[n].image)) problems.push(`compose.yaml: ${n} should use an official image (got ${s[n].image})`);
  const gatewayImage = interpolate(s['gateway-1'].image, vars);
  for (const n of ['migrate', 'gateway-1', 'gateway-2', 'sim']) {
    if (interpolate(s[n].image, vars) !== gatewayImage) problems.push(`compose.yaml: ${n} does not use the gateway image`);
    if (!s[n].build || !existsSync(join(dir, s[n].build.context, s[n].build.dockerfile ?? 'Dockerfile'))) problems.push(`compose.yaml: ${n} builds from a missing Dockerfile`);
  }
  for (const [n, svc] of Object.entries(s)) {
    for (const [dep, cond] of Object.entries(svc.depends_on ?? {})) {
      if (!s[dep]) problems.push(`compose.yaml: ${n} depends on unknown service ${dep}`);
      if (!['service_started', 'service_healthy', 'service_completed_successfully'].includes(cond.condition)) problems.push(`compose.yaml: ${n} → ${dep}: unknown condition ${cond.condition}`);
      if (cond.condition === 'service_healthy' && !s[dep].healthcheck && !['gateway-1', 'gateway-2'].includes(dep)) problems.push(`compose.yaml: ${n} waits for ${dep} to be healthy, which has no healthcheck`);
      if (s[dep]?.profiles && !svc.profiles) problems.push(`compose.yaml: ${n} depends on ${dep}, which only runs in profile(s) ${s[dep].profiles}`);
    }
    for (const v of svc.volumes ?? []) {
      const src = interpolate(String(v), vars).split(':')[0];
      if (src.startsWith('./') && !existsSync(join(dir, src))) problems.push(`compose.yaml: ${n} mounts missing file ${src}`);
    }
  }
  if (JSON.stringify(s.migrate.command) !== '["migrate"]') problems.push('compose.yaml: the migrate service should run `migrate`');
  for (const n of ['gateway-1', 'gateway-2']) {
    const env = composeEnv(s[n], { ...vars, GATEWAY_ADMIN_KEY: '' });
    if (env.GATEWAY_MIGRATE !== 'off') problems.push(`compose.yaml: ${n} should run with GATEWAY_MIGRATE=off`);
    if (!env.GATEWAY_DATABASE_URL.startsWith('postgres://') || !env.GATEWAY_DATABASE_URL.includes('@postgres:')) problems.push(`compose.yaml: ${n} is not on the postgres service`);
    if (env.GATEWAY_REDIS_URL !== 'redis://redis:6379') problems.push(`compose.yaml: ${n} is not on the redis service`);
    if (s[n].depends_on?.migrate?.condition !== 'service_completed_successfully') problems.push(`compose.yaml: ${n} must start after migrate completed`);
    if (!/^\d+s$/.test(s[n].stop_grace_period ?? '') || parseInt(s[n].stop_grace_period, 10) * 1000 <= Number(env.GATEWAY_SHUTDOWN_GRACE_MS ?? 30000)) problems.push(`compose.yaml: ${n}'s stop_grace_period must exceed GATEWAY_SHUTDOWN_GRACE_MS`);
  }
  if (!(s.sim.profiles ?? []).includes('demo')) problems.push('compose.yaml: the simulator belongs in the demo profile');
  if (!(s.lb.ports ?? []).length) problems.push('compose.yaml: the load balancer publishes no port');
  const nginx = readFileSync(join(dir, 'nginx.conf'), 'utf8');
  for (const n of ['gateway-1', 'gateway-2']) if (!nginx.includes(`server ${n}:8080`)) problems.push(`nginx.conf: ${n}:8080 is not an upstream`);
  if (!/proxy_buffering off/.test(nginx)) problems.push('nginx.conf: streams need proxy_buffering off');
  // The demo config routes to the sim service.
  const demo = parseYaml(readFileSync(join(dir, vars.GATEWAY_CONFIG_FILE ?? 'demo.yaml'), 'utf8'));
  const simPort = composeEnv(s.sim, vars).SIM_PORT;
  for (const p of demo.providers ?? []) if (!p.base_url.startsWith(`http://sim:${simPort}/`)) problems.push(`demo config: provider ${p.slug} is not on the sim service (${p.base_url})`);
  parseYaml(readFileSync(join(dir, 'gateway.yaml'), 'utf8'));
}

/** Paths of a YAML mapping, as dotted strings ("a", "a.b", …). */
function paths(obj, prefix = '', out = new Set()) {
  if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) {
      const p = prefix ? `${prefix}.${k}` : k;
      out.add(p);
      paths(v, p, out);
    }
  }
  return out;
}

function checkChart(root, problems) {
  const dir = join(root, 'deploy', 'helm', 'model-gateway');
  const chart = parseYaml(readFileSync(join(dir, 'Chart.yaml'), 'utf8'));
  if (chart.apiVersion !== 'v2' || !chart.name || !/^\d+\.\d+\.\d+/.test(chart.version ?? '')) problems.push('Chart.yaml: needs apiVersion v2, a name and a SemVer version');
  const values = parseYaml(readFileSync(join(dir, 'values.yaml'), 'utf8'));
  const known = paths(values);
  const tdir = join(dir, 'templates');
  const files = readdirSync(tdir);
  const defines = new Set();
  const includes = [];
  for (const f of files) {
    const text = readFileSync(join(tdir, f), 'utf8');
    if ((text.match(/\{\{/g) ?? []).length !== (text.match(/\}\}/g) ?? []).length) problems.push(`templates/${f}: unbalanced {{ }}`);
    const stack = [];
    for (const m of text.matchAll(/\{\{-?\s*(\/\*[\s\S]*?\*\/|[\s\S]*?)\s*-?\}\}/g)) {
      const action = m[1];
      if (action.startsWith('/*')) continue;
      const word = /^(if|range|with|define|else|end)\b/.exec(action)?.[1];
      if (word === 'if' || word === 'range' || word === 'with' || word === 'define') stack.push(word);
      else if (word === 'else' && !['if', 'with', 'range'].includes(stack[stack.length - 1])) problems.push(`templates/${f}: else outside if`);
      else if (word === 'end' && !stack.pop()) problems.push(`templates/${f}: end without a block`);
      const def = /^define "([^"]+)"/.exec(action);
      if (def) defines.add(def[1]);
      for (const inc of action.matchAll(/include "([^"]+)"/g)) includes.push([f, inc[1]]);
      for (const v of action.matchAll(/\$?\.Values\.([A-Za-z0-9_.]+)/g)) {
        if (!known.has(v[1])) problems.push(`templates/${f}: .Values.${v[1]} is not in values.yaml`);
      }
    }
    if (stack.length) problems.push(`templates/${f}: unclosed ${stack.join(', ')}`);
  }
  for (const [f, name] of includes) if (!defines.has(name)) problems.push(`templates/${f}: include "${name}" has no define`);
  const kinds = files.filter((f) => f.endsWith('.yaml')).map((f) => /^kind: (\w+)/m.exec(readFileSync(join(tdir, f), 'utf8'))?.[1]);
  for (const k of ['Deployment', 'Job', 'ConfigMap', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ServiceMonitor', 'Service']) {
    if (!kinds.includes(k)) problems.push(`chart: no ${k} template`);
  }
  return { dir, values };
}

export function checkStructure(root, log) {
  const problems = [];
  checkCompose(root, problems);
  checkChart(root, problems);
  if (problems.length) throw new Error(`deployment files:\n  - ${problems.join('\n  - ')}`);
  log('compose.yaml, nginx.conf, the demo config and the Helm chart: structure as expected');
}
