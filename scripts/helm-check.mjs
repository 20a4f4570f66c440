/**
 * The Helm chart rendered (scripts/helm-render.mjs) with several value sets and checked as Kubernetes would read it:
 * every document parses, has a known apiVersion/kind and a valid name; selectors match the pods they mean (and not
 * the migration Job's); probes, ports, volumes and Secret references are consistent; the config file in the ConfigMap
 * passes the gateway's own config validation. For `npm run deploy:check`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { renderChart } from './helm-render.mjs';

const KINDS = {
  'v1/ConfigMap': 1, 'v1/Secret': 1, 'v1/Service': 1, 'v1/ServiceAccount': 1, 'v1/PersistentVolumeClaim': 1,
  'apps/v1/Deployment': 1, 'batch/v1/Job': 1, 'autoscaling/v2/HorizontalPodAutoscaler': 1, 'policy/v1/PodDisruptionBudget': 1,
  'monitoring.coreos.com/v1/ServiceMonitor': 1,
};
const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const SETS = {
  'defaults (migration Job, existing Secret)': { values: { secrets: { existingSecret: 'gw-secrets' } }, expect: { mode: 'job', secret: 'gw-secrets', kinds: ['Deployment', 'Job', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ConfigMap', 'Service', 'ServiceAccount'] } },
  'init container, chart Secret, ServiceMonitor, extra env': {
    values: {
      migrations: { mode: 'initContainer' },
      secrets: { create: true, values: { 'database-url': 'postgres://gw:pw@db:5432/gw', 'redis-url': 'redis://redis:6379' } },
      serviceMonitor: { enabled: true, bearerTokenSecret: { name: 'metrics', key: 'token' } },
      extraSecretEnv: { VLLM_KEY: { secret: 'vllm', key: 'token' } },
      env: { GATEWAY_LOG_LEVEL: 'debug', GATEWAY_SHUTDOWN_GRACE_MS: 20000 },
      config: { log_level: 'warn', providers: [{ slug: 'local-vllm', name: 'Local vLLM', protocol: 'openai', base_url: 'http://vllm:8000/v1', api_key_env: 'VLLM_KEY' }] },
    },
    expect: { mode: 'initContainer', secret: 'gw-model-gateway', kinds: ['Deployment', 'Secret', 'ServiceMonitor'] },
  },
  'single pod on SQLite': {
    values: {
      secrets: { create: true, values: { 'database-url': 'sqlite:/data/gateway.db' } },
      persistence: { enabled: true }, autoscaling: { enabled: false }, replicaCount: 1, podDisruptionBudget: { enabled: false }, migrations: { mode: 'auto' },
    },
    expect: { mode: 'auto', secret: 'gw-model-gateway', kinds: ['Deployment', 'PersistentVolumeClaim'], absent: ['Job', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'] },
  },
};

const subset = (sel, labels) => Object.entries(sel ?? {}).every(([k, v]) => labels?.[k] === v);

function checkPodSpec(where, spec, docs, expect, report) {
  const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
  for (const v of spec.volumes ?? []) {
    if (v.configMap && !docs.some((d) => d.kind === 'ConfigMap' && d.metadata.name === v.configMap.name)) report(`${where}: volume ${v.name} names a ConfigMap not rendered`);
    if (v.persistentVolumeClaim && !docs.some((d) => d.kind === 'PersistentVolumeClaim' && d.metadata.name === v.persistentVolumeClaim.claimName)) report(`${where}: volume ${v.name} names a claim not rendered`);
  }
  if (spec.securityContext?.runAsNonRoot !== true) report(`${where}: pods must run as non-root`);
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if (!c.name || !c.image) report(`${where}: a container without name or image`);
    for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) report(`${where}/${c.name}: mount ${m.name} has no volume`);
    const names = new Set();
    for (const e of c.env ?? []) {
      if (names.has(e.name)) report(`${where}/${c.name}: ${e.name} set twice`);
      names.add(e.name);
      if (('value' in e) === ('valueFrom' in e)) report(`${where}/${c.name}: ${e.name} needs exactly one of value and valueFrom`);
      if ('value' in e && typeof e.value !== 'string') report(`${where}/${c.name}: ${e.name}'s value must be a string (got ${typeof e.value})`);
      const ref = e.valueFrom?.secretKeyRef;
      if (ref && (!ref.name || !ref.key)) report(`${where}/${c.name}: ${e.name} refers to no Secret key`);
      if (ref && e.name.startsWith('GATEWAY_') && ref.name !== expect.secret) report(`${where}/${c.name}: ${e.name} reads Secret ${ref.name}, expected ${expect.secret}`);
    }
    if (!names.has('GATEWAY_DATABASE_URL')) report(`${where}/${c.name}: no GATEWAY_DATABASE_URL`);
    const migrate = c.env?.find((e) => e.name === 'GATEWAY_MIGRATE')?.value;
    if (migrate !== (expect.mode === 'auto' ? 'auto' : 'off')) report(`${where}/${c.name}: GATEWAY_MIGRATE=${migrate} in ${expect.mode} mode`);
  }
}

function checkSet(name, docs, expect, problems, validateConfig) {
  const p = (m) => problems.push(`[${name}] ${m}`);
  const kinds = docs.map((d) => d.kind);
  for (const k of expect.kinds) if (!kinds.includes(k)) p(`no ${k} rendered`);
  for (const k of expect.absent ?? []) if (kinds.includes(k)) p(`${k} rendered but should not be`);
  for (const d of docs) {
    if (!KINDS[`${d.apiVersion}/${d.kind}`]) p(`unknown apiVersion/kind ${d.apiVersion}/${d.kind}`);
    if (!DNS1123.test(d.metadata?.name ?? '') || d.metadata.name.length > 63) p(`${d.kind}: invalid name ${d.metadata?.name}`);
    for (const [k, v] of Object.entries(d.metadata?.labels ?? {})) if (typeof v !== 'string' || v.length > 63) p(`${d.kind}: label ${k} must be a string of at most 63 characters`);
  }
  const dep = docs.find((d) => d.kind === 'Deployment');
  const pod = dep.spec.template;
  if (!subset(dep.spec.selector.matchLabels, pod.metadata.labels)) p('Deployment: selector does not match its pods');
  const gw = pod.spec.containers.find((c) => c.name === 'gateway');
  const ports = new Set(gw.ports.map((x) => x.name));
  if (gw.readinessProbe?.httpGet?.path !== '/ready' || gw.livenessProbe?.httpGet?.path !== '/health') p('Deployment: readiness must be /ready and liveness /health');
  for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) if (!ports.has(gw[probe]?.httpGet?.port)) p(`Deployment: ${probe} port is not a container port`);
  const grace = Number(gw.env.find((e) => e.name === 'GATEWAY_SHUTDOWN_GRACE_MS')?.value ?? 30000);
  const preStop = Number(gw.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
  if (pod.spec.terminationGracePeriodSeconds * 1000 <= grace + preStop * 1000) p('Deployment: terminationGracePeriodSeconds must exceed the preStop pause plus GATEWAY_SHUTDOWN_GRACE_MS');
  checkPodSpec('Deployment', pod.spec, docs, expect, p);
  const init = pod.spec.initContainers ?? [];
  if ((expect.mode === 'initContainer') !== (init.length === 1 && init[0].args?.[0] === 'migrate')) p('Deployment: the migrate init container belongs to initContainer mode only');
  const hpa = docs.find((d) => d.kind === 'HorizontalPodAutoscaler');
  if (hpa && (hpa.spec.scaleTargetRef.name !== dep.metadata.name || hpa.spec.minReplicas > hpa.spec.maxReplicas)) p('HPA: target or bounds wrong');
  if (hpa && 'replicas' in dep.spec) p('Deployment: replicas set although the HPA owns them');
  if (!hpa && dep.spec.replicas === undefined) p('Deployment: no replicas without an HPA');
  const svc = docs.find((d) => d.kind === 'Service');
  if (!subset(svc.spec.selector, pod.metadata.labels)) p('Service: selector does not match the pods');
  for (const sp of svc.spec.ports) if (!ports.has(sp.targetPort)) p(`Service: targetPort ${sp.targetPort} is not a container port`);
  const pdb = docs.find((d) => d.kind === 'PodDisruptionBudget');
  if (pdb && !subset(pdb.spec.selector.matchLabels, pod.metadata.labels)) p('PDB: selector does not match the pods');
  const job = docs.find((d) => d.kind === 'Job');
  if (job) {
    if (job.spec.template.spec.containers[0].args?.[0] !== 'migrate') p('Job: does not run migrate');
    if (!/pre-install/.test(job.metadata.annotations?.['helm.sh/hook'] ?? '') || !/pre-upgrade/.test(job.metadata.annotations['helm.sh/hook'])) p('Job: must be a pre-install,pre-upgrade hook');
    for (const sel of [dep.spec.selector.matchLabels, svc.spec.selector, pdb?.spec.selector.matchLabels]) if (sel && subset(sel, job.spec.template.metadata.labels)) p('Job: its pod is selected by the Deployment, Service or PDB');
    checkPodSpec('Job', job.spec.template.spec, docs, expect, p);
  }
  const secret = docs.find((d) => d.kind === 'Secret');
  if (secret) {
    for (const [k, v] of Object.entries(secret.data ?? {})) if (Buffer.from(v, 'base64').toString('base64') !== v) p(`Secret: ${k} is not base64`);
    if (job && !/pre-install/.test(secret.metadata.annotations?.['helm.sh/hook'] ?? '')) p('Secret: the migration Job needs it as an earlier hook');
  }
  const sm = docs.find((d) => d.kind === 'ServiceMonitor');
  if (sm) {
    if (!subset(sm.spec.selector.matchLabels, svc.metadata.labels)) p('ServiceMonitor: selector does not match the Service');
    for (const e of sm.spec.endpoints) if (!svc.spec.ports.some((x) => x.name === e.port) || e.path !== '/metrics') p('ServiceMonitor: endpoint must be the Service port http, /metrics');
  }
  const cm = docs.find((d) => d.kind === 'ConfigMap');
  validateConfig(cm.data['gateway.yaml'], (m) => p(`ConfigMap gateway.yaml: ${m}`));
}

/**
 * Renders and checks the chart; `loadConfig` is the gateway's own (from the build) to validate the config file.
 * Returns the number of documents checked.
 */
export function checkHelmChart(chartDir, loadConfig) {
  const problems = [];
  const dir = mkdtempSync(join(tmpdir(), 'gw-helm-'));
  let count = 0;
  try {
    const validateConfig = (text, report) => {
      const file = join(dir, 'gateway.yaml');
      writeFileSync(file, text);
      try {
        loadConfig({ GATEWAY_CONFIG: file });
      } catch (err) {
        report(err.message);
      }
    };
    for (const [name, set] of Object.entries(SETS)) {
      const docs = [];
      for (const r of renderChart(chartDir, set.values)) {
        if (!r.file.endsWith('.yaml')) continue;
        for (const doc of parseAllDocuments(r.text)) {
          if (doc.errors.length) problems.push(`[${name}] ${r.file}: ${doc.errors[0].message}`);
          const v = doc.toJS();
          if (v) docs.push(v);
        }
      }
      count += docs.length;
      checkSet(name, docs, set.expect, problems, validateConfig);
    }
    // Without any Secret the chart refuses to render, naming the value to set.
    try {
      renderChart(chartDir, {});
      problems.push('rendering without secrets.existingSecret or secrets.create should fail');
    } catch (err) {
      if (!/secrets\.existingSecret/.test(err.message)) problems.push(`rendering without a Secret failed for another reason: ${err.message}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (problems.length) throw new Error(`Helm chart:\n  - ${problems.join('\n  - ')}`);
  return count;
}
