/** Terminal-state webhooks: payload, HMAC signature, idempotency key, retries with backoff (kept across restarts). */
import { describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/services/videos.js';
import { BACKENDS } from '../helpers.js';
import { startVideoEnv, videoEnvFor, until, verifySignature, waitForJob, webhookReceiver, WEBHOOK_SECRET } from './util.js';

describe('webhook signature', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>,<raw body>")>', () => {
    // Reference value computed independently: printf '1700000000,{"a":1}' | openssl dgst -sha256 -hmac 'secret-secret-123'
    expect(signWebhook('secret-secret-123', 1700000000, '{"a":1}')).toBe('t=1700000000,v1=512c22d82c334359098aa18e7af853ec9e8cae6ccf277b6725615e7ee5128724');
    const now = Math.floor(Date.now() / 1000);
    const header = signWebhook(WEBHOOK_SECRET, now, '{"x":true}');
    expect(verifySignature(header, '{"x":true}', WEBHOOK_SECRET)).toBe(true);
    expect(verifySignature(header, '{"x":false}', WEBHOOK_SECRET)).toBe(false);
    expect(verifySignature(header, '{"x":true}', 'another-secret-000')).toBe(false);
    expect(verifySignature(signWebhook(WEBHOOK_SECRET, now - 3600, '{}'), '{}', WEBHOOK_SECRET)).toBe(false); // stale
  });
});

describe.each(BACKENDS)('video webhooks (%s)', (backend) => {
  const env = videoEnvFor(backend);

  it('POSTs a signed video.generation.completed event, retried with backoff after a failing receiver', async () => {
    const hook = await webhookReceiver([500, 503]);
    try {
      const res = await env.call('POST', '/videos', { body: { model: 'test/sora', prompt: 'hook: completed', callback_url: hook.url } });
      expect(res.status).toBe(202);
      const id = res.body.id as string;
      const { job } = await waitForJob(env.t, env.key, id);
      await until(() => hook.received.length >= 3, 10_000, 'three deliveries');
      const [a, b, c] = hook.received;
      for (const r of hook.received) {
        expect(r.headers['content-type']).toBe('application/json');
        expect(r.headers['x-gateway-idempotency-key']).toBe(`${id}-completed`);
        expect(verifySignature(r.headers['x-gateway-signature'] as string, r.raw, WEBHOOK_SECRET)).toBe(true);
        expect(verifySignature(r.headers['x-gateway-signature'] as string, r.raw, 'not-the-secret-000')).toBe(false);
      }
      // The same event every time; the retries wait longer and longer (50 ms, then 100 ms).
      expect(b.raw).toBe(a.raw);
      expect(c.raw).toBe(a.raw);
      expect(b.at - a.at).toBeGreaterThanOrEqual(40);
      expect(c.at - b.at).toBeGreaterThanOrEqual(90);
      expect(c.body).toEqual({
        type: 'video.generation.completed',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        data: { id, status: 'completed', generation_id: job.generation_id, model: 'test/sora', unsigned_urls: job.unsigned_urls, usage: { cost: 0.4, is_byok: false } },
      });
      await until(async () => (await env.t.gw.svc.store.getVideoJob(id))!.webhook_state === 'delivered', 5000, 'delivered');
      const row = (await env.t.gw.svc.store.getVideoJob(id))!;
      expect(row.webhook_attempts).toBe(3);
      expect(row.lease_owner).toBeNull();
      await new Promise((r) => setTimeout(r, 150));
      expect(hook.received).toHaveLength(3); // delivered once acknowledged: no more
    } finally {
      await hook.close();
    }
  });

  it('sends video.generation.failed with the error', async () => {
    const hook = await webhookReceiver();
    try {
      env.sim.setKnobs('sim-veo', { videoFail: 'nope, not this one' });
      const res = await env.call('POST', '/videos', { body: { model: 'test/veo', prompt: 'hook: failed', callback_url: hook.url } });
      await until(() => hook.received.length >= 1, 10_000, 'a delivery');
      const r = hook.received[0];
      expect(r.headers['x-gateway-idempotency-key']).toBe(`${res.body.id}-failed`);
      expect(r.body.type).toBe('video.generation.failed');
      expect(r.body.data).toMatchObject({ id: res.body.id, status: 'failed', model: 'test/veo', error: 'nope, not this one' });
      expect(r.body.data.usage).toBeUndefined();
      expect(r.body.data.unsigned_urls).toBeUndefined();
    } finally {
      await hook.close();
    }
  });

  it('sends video.generation.cancelled for a cancelled job', async () => {
    const hook = await webhookReceiver();
    try {
      env.sim.setKnobs('sim-ov', { videoJobMs: 60_000 });
      const res = await env.call('POST', '/videos', { body: { model: 'test/sora', prompt: 'hook: cancelled', callback_url: hook.url } });
      await waitForJob(env.t, env.key, res.body.id, (j) => j.status === 'in_progress');
      expect((await env.call('POST', `/videos/${res.body.id}/cancel`)).status).toBe(200);
      await until(() => hook.received.length >= 1, 10_000, 'a delivery');
      expect(hook.received[0].body).toMatchObject({ type: 'video.generation.cancelled', data: { id: res.body.id, status: 'cancelled' } });
      expect(hook.received[0].headers['x-gateway-idempotency-key']).toBe(`${res.body.id}-cancelled`);
    } finally {
      await hook.close();
    }
  });

  it('refuses loopback callbacks unless the configuration allows them', async () => {
    const strict = await env.another({ GATEWAY_VIDEO_ALLOW_LOOPBACK_CALLBACKS: 'false', GATEWAY_VIDEO_WORKER: 'false' });
    try {
      for (const url of ['http://127.0.0.1:9/hook', 'https://localhost/hook', 'https://[::1]/hook']) {
        const r = await strict.call('POST', '/videos', { key: env.key, body: { model: 'test/sora', prompt: 'x', callback_url: url } });
        expect(r.status, url).toBe(400);
        expect(r.body.error.message).toMatch(/loopback/);
      }
    } finally {
      await strict.stop();
    }
  });
});

describe.each(BACKENDS)('video webhooks without a secret, giving up, across restarts (%s)', (backend) => {
  it('sends unsigned events without a secret and gives up after the configured attempts', async () => {
    const e = await startVideoEnv(backend, { env: { GATEWAY_WEBHOOK_SECRET: '', GATEWAY_WEBHOOK_MAX_ATTEMPTS: '2' } });
    const hook = await webhookReceiver([500, 500, 500, 500]);
    try {
      const res = await e.call('POST', '/videos', { body: { model: 'test/sora', prompt: 'hook: give up', callback_url: hook.url } });
      await until(async () => (await e.t.gw.svc.store.getVideoJob(res.body.id))!.webhook_state === 'failed', 10_000, 'given up');
      const row = (await e.t.gw.svc.store.getVideoJob(res.body.id))!;
      expect(row.webhook_attempts).toBe(2);
      expect(row.webhook_last_error).toBe('HTTP 500');
      expect(hook.received).toHaveLength(2);
      expect(hook.received[0].headers['x-gateway-signature']).toBeUndefined();
      expect(hook.received[0].headers['x-gateway-idempotency-key']).toBe(`${res.body.id}-completed`);
    } finally {
      await hook.close();
      await e.close();
    }
  });

  it('keeps a webhook retry in the database: a restarted gateway delivers it', async () => {
    const e = await startVideoEnv(backend, { env: { GATEWAY_WEBHOOK_RETRY_MS: '400' } });
    const hook = await webhookReceiver([500]);
    try {
      const res = await e.call('POST', '/videos', { body: { model: 'test/sora', prompt: 'hook: restart', callback_url: hook.url } });
      await until(() => hook.received.length >= 1, 10_000, 'the first delivery');
      await until(async () => (await e.t.gw.svc.store.getVideoJob(res.body.id))!.webhook_attempts === 1, 5000, 'the failure recorded');
      await e.t.stop();
      const b = await e.another({ GATEWAY_WEBHOOK_RETRY_MS: '400' });
      await until(() => hook.received.length >= 2, 10_000, 'the retry');
      expect(hook.received[1].at - hook.received[0].at).toBeGreaterThanOrEqual(350);
      expect(hook.received[1].raw).toBe(hook.received[0].raw);
      await until(async () => (await b.gw.svc.store.getVideoJob(res.body.id))!.webhook_state === 'delivered', 5000, 'delivered');
      expect((await b.gw.svc.store.getVideoJob(res.body.id))!.webhook_attempts).toBe(2);
    } finally {
      await hook.close();
      await e.close();
    }
  });
});
