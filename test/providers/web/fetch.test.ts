/** The web_fetch server tool's fetcher: text of pages, redirects, limits, and the refusals that keep it off private networks. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedLookup, WebFetcher } from '../../../src/providers/web/fetch.js';
import { createSimulator, type Simulator } from '../../../src/sim/index.js';

describe('WebFetcher', () => {
  let sim: Simulator;
  // The simulator listens on 127.0.0.1: this fetcher is allowed private addresses, as an intranet deployment would be.
  const intranet = new WebFetcher(true);
  const public_ = new WebFetcher(false);
  beforeAll(async () => {
    sim = await createSimulator();
  });
  afterAll(async () => {
    await Promise.all([sim.close(), intranet.close(), public_.close()]);
  });
  const page = (name: string) => `${sim.url}/sim-web/pages/${name}`;

  it('an HTML page as text: title, headings as written, link text without URLs, no script or style', async () => {
    const p = await intranet.fetch(page('html'), 20_000);
    expect(p).toMatchObject({ url: page('html'), status: 200, content_type: 'text/html', title: 'Sim page', truncated: false });
    expect(p.content).toContain('Hello from the simulator');
    expect(p.content).toContain('A paragraph with a link.');
    expect(p.content).not.toMatch(/alert|color:red|elsewhere/);
  });

  it('follows redirects (each target checked again), at most 5', async () => {
    expect((await intranet.fetch(page('redirect'), 20_000)).url).toBe(page('html'));
    await expect(intranet.fetch(page('loop'), 20_000)).rejects.toThrow('more than 5 redirects');
  });

  it('refuses what is not text; reads at most 2 MiB and cuts the text at maxChars', async () => {
    await expect(intranet.fetch(page('binary'), 20_000)).rejects.toThrow('the page is image/png, not text');
    const big = await intranet.fetch(page('big'), 5_000);
    expect(big.content).toHaveLength(5_000);
    expect(big.truncated).toBe(true);
  });

  it('never fetches loopback, private or link-local addresses, other schemes or URLs with credentials', async () => {
    await expect(public_.fetch(page('html'), 1_000)).rejects.toThrow('private and loopback addresses cannot be fetched');
    for (const url of ['http://localhost:1/', 'http://10.1.2.3/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://192.168.0.1/']) {
      await expect(public_.fetch(url, 1_000), url).rejects.toThrow('private and loopback addresses cannot be fetched');
    }
    await expect(public_.fetch('file:///etc/passwd', 1_000)).rejects.toThrow('only http and https');
    await expect(public_.fetch('https://user:secret@example.com/', 1_000)).rejects.toThrow('credentials');
    await expect(public_.fetch('not a url', 1_000)).rejects.toThrow('not an absolute URL');
  });

  it('a host name that resolves to a private address is refused at connection time (no DNS rebinding)', async () => {
    // `localhost` resolves through /etc/hosts (no network): the lookup the connection uses refuses it.
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup('localhost', {}, (e) => resolve(e)));
    expect(err?.code).toBe('EPRIVATE');
    expect(err?.message).toMatch(/^localhost resolves to a private address/);
    const all = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup('localhost', { all: true }, (e) => resolve(e)));
    expect(all?.code).toBe('EPRIVATE');
  });
});
