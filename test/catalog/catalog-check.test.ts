/** `npm run catalog:check`: the shipped files validated, prices compared with a hosted /models export (a fixture). */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { compareWithHosted, runCatalogCheck } from '../../scripts/catalog-check.js';
import { CATALOG_DIR, shippedCatalog } from '../../src/services/shipped-catalog.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'hosted-models.json');
const dir = mkdtempSync(join(tmpdir(), 'gw-catalog-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): { status: number; lines: string[] } {
  const lines: string[] = [];
  const status = runCatalogCheck(args, (l) => lines.push(l));
  return { status, lines };
}

describe('catalog:check', () => {
  it('validates the shipped files', () => {
    const { status, lines } = run([]);
    expect(status).toBe(0);
    expect(lines[0]).toMatch(/^Catalog files valid: providers\.yaml, chat\.yaml, .* \(14 providers, \d+ models, \d+ endpoints\)\.$/);
  });

  it('prints the prices that differ (model, endpoint, field, shipped, hosted) and the models missing on either side', () => {
    const c = compareWithHosted(shippedCatalog(), JSON.parse(readFileSync(FIXTURE, 'utf8')).data);
    // gpt-4o matches exactly (hosted request/image "0" are what an absent price means); "0.0000030" equals "0.000003".
    expect(c.diffs).toEqual([
      { model: 'anthropic/claude-sonnet-4.6', tag: 'anthropic', field: 'completion', shipped: '0.000015', hosted: '0.000018' },
      // Reasoning tokens are billed at the completion price when the catalog names none.
      { model: 'meta-llama/llama-3.3-70b-instruct', tag: 'together', field: 'internal_reasoning', shipped: '-', hosted: '0.000001' },
    ]);
    expect(c.onlyHosted).toEqual(['openai/gpt-9']);
    expect(c.otherAuthors).toBe(1);
    expect(c.onlyShipped).toContain('openai/gpt-5');
    expect(c.onlyShipped).not.toContain('openai/gpt-4o');

    const { status, lines } = run(['--compare', FIXTURE]);
    expect(status).toBe(0);
    const text = lines.join('\n');
    expect(text).toContain('Prices that differ from');
    expect(text).toMatch(/anthropic\/claude-sonnet-4\.6 +anthropic +completion +0\.000015 +0\.000018/);
    expect(text).toMatch(/Models of the shipped authors missing from the catalog \(1\):\n {2}openai\/gpt-9/);
    expect(text).toContain('(1 hosted models of other authors not listed)');
  });

  it('names every problem of an invalid catalog file, with the file and the path, and exits 1', () => {
    cpSync(CATALOG_DIR, dir, { recursive: true });
    const chat = readFileSync(join(dir, 'chat.yaml'), 'utf8');
    writeFileSync(join(dir, 'chat.yaml'), chat.replace('pricing: { prompt: "0.0000025"', 'pricing: { prompt: 0.00000025, bogus: "1"').replace('tokenizer: GPT', 'tokenizer: [GPT]'));
    const { status, lines } = run(['--dir', dir]);
    expect(status).toBe(1);
    expect(lines[0]).toMatch(/^Invalid \(\d+\):$/);
    expect(lines).toContain('  - chat.yaml: models[0].tokenizer must be a string');
    // An unquoted price is a float in YAML: refused where it would not print as a plain decimal.
    expect(lines).toContain('  - chat.yaml: endpoints[0].pricing.prompt must be a non-negative decimal string like "0.0000025" (got 2.5e-7)');
    expect(lines.some((l) => /^ {2}- chat\.yaml: endpoints\[0\]\.pricing\.bogus is not a known field/.test(l))).toBe(true);
  });

  it('refuses an export that is not a /models listing', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ models: [] }));
    const { status, lines } = run(['--compare', bad]);
    expect(status).toBe(1);
    expect(lines.join('\n')).toContain(`${bad}: data must be a list of models, each with an id and its pricing`);
    expect(run(['--compare']).status).toBe(1);
  });

  it('runs as npm run catalog:check', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'catalog:check', '--', '--compare', FIXTURE], { cwd: join(import.meta.dirname, '..', '..') });
    expect(stdout).toMatch(/^Catalog files valid: /);
    expect(stdout).toMatch(/anthropic\/claude-sonnet-4\.6 +anthropic +completion +0\.000015 +0\.000018/);
  }, 90_000);
});
