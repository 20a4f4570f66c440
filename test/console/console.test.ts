/**
 * The web console in a real browser: Debian's chromium driven by playwright-core (headless, no browser download)
 * against a gateway over SQLite whose catalog routes to the simulator. The console is built first (vite), exactly as
 * `npm run build` does. Flows: sign in; create a key and see its secret once; traffic appears in Overview and in
 * Requests with its detail; the playground streams an answer; a workspace budget makes a request 402, seen in the
 * log; a disabled key is refused; a key's expiry is edited; a workspace's I/O logging keys are chosen; a BYOK credential
 * is added and edited with its order, always-use and allowed models, keys and members. Every page is screenshot into test-artifacts/console/ (light and dark) and checked
 * with axe-core (no serious or critical violation).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { ADMIN_KEY } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ARTIFACTS = join(ROOT, 'test-artifacts', 'console');
const CHROMIUM = process.env.GATEWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let env: ChatEnv;
let browser: BrowserContext;
let page: Page;
let profile: string;
let base: string;
/** The secret of the key created through the console. */
let secret = '';
const figures: Record<string, number> = {};
/** What the page reported as errors (a CSP violation, an exception), besides the API's own 4xx answers. */
const pageErrors: string[] = [];

/** The page's storages, as seen inside page.evaluate (the server's tsconfig has no DOM types). */
type Storages = { sessionStorage: { getItem(k: string): string | null }; localStorage: object };

async function shot(name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** axe-core on the current page: no serious or critical violation. */
async function accessible(name: string) {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await (globalThis as unknown as { axe: { run: (o: object) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe.run({ resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `${name}: ${JSON.stringify(bad, null, 1)}`).toEqual([]);
}

async function open(path: string, heading: string) {
  await page.getByRole('link', { name: heading, exact: true }).first().click();
  await page.waitForURL(`**/console${path}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

async function chat(key: string, model = 'test/alpha', content = 'hello console') {
  const res = await fetch(`${env.t.api}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('console (chromium)', () => {
  beforeAll(async () => {
    const started = Date.now();
    // As `npm run build:console` does (a child process: vitest's NODE_ENV=test would give React's development build).
    const { NODE_ENV: _n, ...rest } = process.env;
    const built = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(ROOT, 'src/console-ui/vite.config.mjs')], { env: rest, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`console build failed: ${built.stderr}`);
    figures.build_ms = Date.now() - started;
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    env = await startChatEnv('sqlite', { env: { GATEWAY_RECORD_FLUSH_MS: '50', GATEWAY_ENCRYPTION_KEY: 'console-test-encryption-key-0123456789abcdef' } });
    base = `${env.t.url}/console`;
    profile = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
    // A fresh profile directory for each run.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1360, height: 900 },
      colorScheme: 'light',
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    figures.setup_ms = Date.now() - started;
    page.on('dialog', (d) => void d.accept());
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) pageErrors.push(m.text());
    });
  });

  afterAll(async () => {
    const closing = Date.now();
    await browser?.close();
    await env?.close();
    figures.teardown_ms = Date.now() - closing;
    if (profile) rmSync(profile, { recursive: true, force: true });
    // The figures the report quotes (bundle size, first paint), from this run.
    if (Object.keys(figures).length) console.log('console figures', JSON.stringify(figures));
  });

  it('serves the built app with cache headers, deep links and no console when turned off', async () => {
    const index = await fetch(base);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await index.text();
    const js = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await fetch(env.t.url + js, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    // A deep link gets the app; a missing hashed asset is a real 404.
    const deep = await fetch(`${base}/requests/gen-123`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(html);
    expect((await fetch(`${base}/assets/index-missing.js`)).status).toBe(404);
    // Bundle size as shipped (gzip), for the report.
    const dir = join(ROOT, 'dist/console/assets');
    const files = (await import('node:fs')).readdirSync(dir);
    figures.bundle_gzip_bytes = files.reduce((n, f) => n + gzipSync(readFileSync(join(dir, f)), { level: 9 }).length, 0);
    figures.bundle_raw_bytes = files.reduce((n, f) => n + readFileSync(join(dir, f)).length, 0);
    expect(figures.bundle_gzip_bytes).toBeLessThan(250_000);

    const { startGateway } = await import('../helpers.js');
    const off = await startGateway('sqlite', { env: { GATEWAY_CONSOLE: 'off' } });
    try {
      const res = await fetch(`${off.url}/console`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.message).toMatch(/No route for GET \/console/);
    } finally {
      await off.close();
    }
    expect(existsSync(join(ROOT, 'dist/console/index.html'))).toBe(true);
  });

  it('signs in with a management key (a wrong key shows the API message) and signs out', async () => {
    await page.goto(`${base}/overview`);
    await page.getByLabel('Management key').waitFor();
    figures.first_contentful_paint_ms = Math.round(await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1));
    await shot('00-sign-in');
    await accessible('sign-in');
    await page.getByLabel('Management key').fill('sk-gw-v1-wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Error 401/);
    await page.getByLabel('Management key').fill(env.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/inference key/);
    await page.getByLabel('Management key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByText('No requests in this range yet.').waitFor();
    // Only in session storage.
    expect(await page.evaluate(() => [(globalThis as unknown as Storages).sessionStorage.getItem('gateway.console.key'), JSON.stringify((globalThis as unknown as Storages).localStorage)])).toEqual([ADMIN_KEY, expect.not.stringContaining(ADMIN_KEY)]);
    await shot('01-overview-empty');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management key').waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as Storages).sessionStorage.getItem('gateway.console.key'))).toBeNull();
    await page.getByLabel('Management key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  it('creates a key and shows its secret once', async () => {
    await open('/keys', 'Keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('console-made');
    await page.getByLabel('Spending limit (USD)').fill('5');
    await page.getByLabel('Rate limit: requests').fill('100');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByTestId('new-secret').waitFor();
    secret = (await page.getByTestId('secret-value').textContent())!;
    expect(secret).toMatch(/^sk-gw-v1-/);
    await page.getByRole('row', { name: /console-made/ }).waitFor();
    await shot('02-keys-secret-once');
    await accessible('keys');
    // Gone once acknowledged, and not shown again after a reload.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.reload();
    await page.getByRole('row', { name: /console-made/ }).waitFor();
    expect(await page.getByTestId('new-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    // The key works.
    expect((await chat(secret)).status).toBe(200);
  });

  it("edits a key's expiry (and back to never) in the same form as creation", async () => {
    const keyOf = async () => ((await env.t.call('GET', '/keys')).body.data as any[]).find((k) => k.name === 'console-made');
    const row = page.getByRole('row', { name: /console-made/ }).first();
    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit console-made' });
    // The create form's fields, filled with the key's settings.
    expect(await form.getByLabel('Spending limit (USD)').inputValue()).toBe('5');
    expect(await form.getByLabel('Rate limit: requests').inputValue()).toBe('100');
    expect(await form.getByLabel('Expires').inputValue()).toBe('');
    await form.getByLabel('Expires').fill('2099-03-04T05:06');
    await shot('02b-keys-edit-expiry');
    await accessible('keys (edit)');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    const expected = await page.evaluate(() => new Date('2099-03-04T05:06').toISOString());
    await expect.poll(async () => (await keyOf()).expires_at).toBe(expected);
    expect(await row.textContent()).toContain('2099');
    expect((await keyOf()).limit).toBe(5);
    // Cleared: never expires.
    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await form.getByLabel('Expires').inputValue()).toBe('2099-03-04T05:06');
    await form.getByLabel('Expires').fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(async () => (await keyOf()).expires_at).toBeNull();
    expect(await row.getByRole('cell', { name: 'never' }).count()).toBe(1);
    expect((await chat(secret)).status).toBe(200);
  });

  it('shows traffic in Overview charts and in Requests with its detail', async () => {
    for (let i = 0; i < 2; i++) expect((await chat(secret)).status).toBe(200);
    expect((await chat(secret, 'test/beta')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    await open('/overview', 'Overview');
    await page.getByTestId('charts').waitFor();
    await expect.poll(async () => page.getByTestId('totals').textContent()).toMatch(/Requests5/);
    expect(await page.locator('.chart canvas').count()).toBeGreaterThanOrEqual(4);
    await page.getByRole('cell', { name: 'test/alpha' }).waitFor();
    await page.getByRole('cell', { name: 'test/beta' }).waitFor();
    await shot('03-overview');
    await accessible('overview');

    await open('/requests', 'Requests');
    const log = page.getByTestId('request-log');
    await log.waitFor();
    expect(await log.locator('tbody tr').count()).toBe(5);
    await page.getByLabel('Model').fill('test/beta');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(async () => log.locator('tbody tr').count()).toBe(1);
    await shot('04-requests');
    await accessible('requests');
    await log.locator('tbody tr a').first().click();
    const detail = page.getByTestId('request-detail');
    await detail.waitFor();
    const text = (await detail.textContent())!;
    expect(text).toContain('test/beta');
    expect(text).toContain('sim-c');
    expect(text).toMatch(/Total cost\$0\.0000/);
    // Content: logged (the API exists and I/O logging kept it), not kept, or the API not on this gateway.
    await expect.poll(async () => /Input and output(Logged|Not kept|.*not available on this gateway)/.test((await detail.textContent())!)).toBe(true);
    await page.getByLabel('Comment').fill('fine answer');
    await page.getByRole('button', { name: 'Send feedback' }).click();
    await page.getByText('Feedback recorded.').waitFor();
    await shot('05-request-detail');
    await accessible('request detail');
  });

  it('streams an answer in the playground, with gateway_metadata', async () => {
    await open('/playground', 'Playground');
    await page.getByRole('button', { name: 'Create a playground key' }).click();
    await expect.poll(async () => (await page.getByLabel('Inference key').inputValue()).startsWith('sk-gw-v1-')).toBe(true);
    await page.getByLabel('Model').selectOption('test/alpha');
    await page.getByLabel('Message').fill('stream please');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(async () => page.getByTestId('answer').textContent()).toMatch(/Simulated reply to: stream please/);
    await page.getByTestId('usage').waitFor();
    await expect.poll(async () => page.getByRole('region', { name: 'gateway_metadata' }).textContent()).toMatch(/attempt/);
    await shot('06-playground');
    await accessible('playground');
  });

  it('refuses a request over a workspace budget with 402 and shows it in the log', async () => {
    await open('/workspaces', 'Workspaces');
    await page.getByRole('link', { name: /Default/ }).click();
    await page.getByRole('heading', { name: 'Budgets' }).waitFor();
    await page.getByLabel('Interval').selectOption('daily');
    await page.getByLabel('Limit (USD)').fill('0.00001');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await page.getByTestId('budgets').getByRole('cell', { name: 'daily', exact: true }).waitFor();
    await shot('07-workspace');
    await accessible('workspace');
    const refused = await chat(secret);
    expect(refused.status).toBe(402);
    await new Promise((r) => setTimeout(r, 300));
    await open('/requests', 'Requests');
    await page.getByLabel('Status').fill('402');
    await page.getByRole('button', { name: 'Apply' }).click();
    const log = page.getByTestId('request-log');
    await expect.poll(async () => (await log.count()) && log.locator('tbody tr').count()).toBe(1);
    expect(await log.locator('tbody tr').first().textContent()).toContain('402');
    await shot('08-requests-402');
    // Remove the budget again (the API's error is shown if it fails).
    await open('/workspaces', 'Workspaces');
    await page.getByRole('link', { name: /Default/ }).click();
    await page.getByRole('button', { name: 'Delete the daily budget' }).click();
    await page.getByText('No budget').waitFor();
  });

  it('disables a key, which is then refused', async () => {
    await open('/keys', 'Keys');
    await page.getByRole('button', { name: 'Disable console-made' }).click();
    await page.getByRole('row', { name: /console-made.*disabled/ }).waitFor();
    await shot('09-keys-disabled');
    await expect.poll(async () => (await chat(secret)).status).toBe(401);
  });

  it('creates a guardrail', async () => {
    await open('/guardrails', 'Guardrails');
    await page.getByText('No guardrails yet.').waitFor();
    await accessible('guardrails (empty)');
    await page.getByRole('button', { name: 'New guardrail' }).click();
    await page.getByLabel('Name', { exact: true }).fill('alpha only');
    await page.getByLabel('Allowed models').fill('test/alpha');
    await page.getByLabel('Spend limit (USD)').fill('2.5');
    // Rate limits (our extension): requests per window and tokens per minute.
    await page.getByLabel('Requests per window').fill('100');
    await page.getByLabel('Window', { exact: true }).fill('60s');
    await page.getByLabel('Tokens per minute').fill('50000');
    await page.getByRole('button', { name: 'Create guardrail' }).click();
    await page.getByRole('link', { name: 'alpha only' }).waitFor();
    await page.getByRole('heading', { name: 'Edit alpha only' }).waitFor();
    expect(await page.getByLabel('Allowed models').inputValue()).toBe('test/alpha');
    const made = ((await env.t.call('GET', '/guardrails')).body.data as any[]).find((g) => g.name === 'alpha only');
    expect(made.rate_limit).toEqual({ requests: 100, interval: '1m', tokens_per_minute: 50000 });
    expect(await page.getByLabel('Window', { exact: true }).inputValue()).toBe('1m');
    // A bad window is refused naming the field; emptied, the tokens limit goes and the request limit stays.
    await page.getByLabel('Window', { exact: true }).fill('1w');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/rate_limit\.interval/).waitFor();
    await page.getByLabel('Window', { exact: true }).fill('1m');
    await page.getByLabel('Tokens per minute').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await env.t.call('GET', `/guardrails/${made.id}`)).body.data.rate_limit).toEqual({ requests: 100, interval: '1m' });
    await shot('10-guardrails');
    await accessible('guardrails');
  });

  it("chooses a workspace's I/O logging keys", async () => {
    const made = ((await env.t.call('GET', '/keys?include_disabled=true')).body.data as any[]).find((k) => k.name === 'console-made');
    await open('/workspaces', 'Workspaces');
    await page.getByRole('link', { name: /Default/ }).click();
    const io = page.getByRole('group', { name: 'I/O logging keys' });
    await io.waitFor();
    expect(await io.getByLabel('Log the requests of every key').isChecked()).toBe(true);
    await io.getByLabel('Log the requests of every key').uncheck();
    await io.getByLabel(/^console-made \(/).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    const ws = async () => (await env.t.call('GET', `/workspaces/${made.workspace_id}`)).body.data;
    await expect.poll(async () => (await ws()).io_logging_api_key_ids).toEqual([made.id]);
    await shot('10b-workspace-io-keys');
    await accessible('workspace (I/O logging keys)');
    // Back to every key.
    await io.getByLabel('Log the requests of every key').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => (await ws()).io_logging_api_key_ids).toBeNull();
  });

  it('adds a BYOK credential with its order, always-use and allowed models, keys and members, then edits it', async () => {
    const made = ((await env.t.call('GET', '/keys?include_disabled=true')).body.data as any[]).find((k) => k.name === 'console-made');
    const byok = async () => ((await env.t.call('GET', '/byok')).body.data as any[])[0];
    await open('/byok', 'BYOK');
    await page.getByText('No provider credential yet.').waitFor();
    const add = page.getByRole('region', { name: 'Add a credential' });
    await add.getByLabel('Provider slug').fill('sim-b');
    await add.getByLabel('API key').fill('sk-console-byok-0001');
    await add.getByLabel('Name', { exact: true }).fill('team key');
    await add.getByLabel('Order').fill('3');
    await add.getByLabel('Allowed models').fill('test/alpha, test/beta');
    await add.getByLabel('Allowed members').fill('user_one');
    await add.getByLabel(/^Always use/).check();
    await add.getByLabel('Every key of the workspace may use it').uncheck();
    await add.getByLabel(/^console-made \(/).check();
    await shot('14b-byok-add');
    await accessible('BYOK (add)');
    await add.getByRole('button', { name: 'Add credential' }).click();
    const row = page.getByRole('row', { name: /team key/ }).first();
    await row.waitFor();
    expect(await row.textContent()).toMatch(/first \(order 3\), never the operator key/);
    expect(await row.textContent()).toContain('models: test/alpha, test/beta; 1 key; members: user_one');
    expect(await byok()).toMatchObject({ provider: 'sim-b', name: 'team key', sort_order: 3, always_use: true, is_fallback: false, allowed_models: ['test/alpha', 'test/beta'], allowed_api_key_hashes: [made.hash], allowed_user_ids: ['user_one'] });
    // Edit: the same fields, filled; a later order, no model restriction, every key, a fallback.
    await row.getByRole('button', { name: 'Edit team key' }).click();
    const form = page.getByRole('form', { name: 'Edit team key' });
    expect(await form.getByLabel('Order').inputValue()).toBe('3');
    expect(await form.getByLabel('Allowed models').inputValue()).toBe('test/alpha, test/beta');
    expect(await form.getByLabel(/^console-made \(/).isChecked()).toBe(true);
    await form.getByLabel('Order').fill('7');
    await form.getByLabel('Allowed models').fill('');
    await form.getByLabel('Every key of the workspace may use it').check();
    await form.getByLabel(/^Use only as a fallback/).check();
    await form.getByLabel(/^Always use/).uncheck();
    await shot('14c-byok-edit');
    await accessible('BYOK (edit)');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(async () => byok()).toMatchObject({ sort_order: 7, always_use: false, is_fallback: true, allowed_models: null, allowed_api_key_hashes: null, allowed_user_ids: ['user_one'] });
    expect(await row.textContent()).toContain('fallback after shared endpoints');
    // A bad list is the API's error, shown in the form.
    await row.getByRole('button', { name: 'Edit team key' }).click();
    await form.getByLabel('Every key of the workspace may use it').uncheck();
    await form.getByRole('button', { name: 'Save' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toMatch(/Error 400.*allowed_api_key_hashes/);
    await form.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('button', { name: 'Delete team key' }).click();
    await page.getByText('No provider credential yet.').waitFor();
  });

  it('renders every other page (screenshots, axe) and the dark theme', async () => {
    for (const [path, heading, name] of [
      ['/presets', 'Presets', '11-presets'],
      ['/models', 'Models & providers', '12-models'],
      ['/credits', 'Credits', '13-credits'],
      ['/byok', 'BYOK', '14-byok'],
      ['/observability', 'Observability', '15-observability'],
    ] as const) {
      await open(path, heading);
      await page.waitForLoadState('networkidle');
      await page.locator('[role=status]:has-text("Loading")').waitFor({ state: 'detached' });
      await shot(name);
      await accessible(heading);
    }
    await open('/models', 'Models & providers');
    await page.getByRole('link', { name: 'test/alpha' }).click();
    await page.getByTestId('endpoints').waitFor();
    expect(await page.getByTestId('endpoints').textContent()).toMatch(/Sim A.*up/);
    await shot('16-model-endpoints');
    await accessible('model endpoints');
    await page.getByRole('button', { name: 'Switch to the dark theme' }).click();
    await open('/overview', 'Overview');
    await page.getByTestId('charts').waitFor();
    await shot('17-overview-dark');
    await accessible('overview (dark)');
    await open('/keys', 'Keys');
    await shot('18-keys-dark');
    await accessible('keys (dark)');
    // No script error and no Content-Security-Policy violation on any page.
    expect(pageErrors).toEqual([]);
  });
});
