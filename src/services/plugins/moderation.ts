/**
 * The `moderation` plugin (docs/plugins.md): before any upstream call, the request's texts go to the configured
 * moderation endpoint (OpenAI's moderation API shape: POST {model, input: [texts]} → {results: [{flagged,
 * categories}]}); a flagged request is refused with 403 naming the categories. Without an endpoint the plugin is
 * refused (400): a request that asks for moderation is never served unmoderated.
 */
import { requestTexts } from '../../core/content-filters/index.js';
import { badRequest, forbidden, HttpError } from '../../core/errors.js';
import type { PluginPipelineEntry } from '../../core/plugins.js';

export interface ModerationConfig {
  url: string;
  apiKey: string | null;
  model: string;
}

type Obj = Record<string, unknown>;

export class Moderation {
  constructor(private readonly cfg: ModerationConfig | null, private readonly timeoutMs = 10_000) {}

  /** Checks the texts of a request body; throws 403 when flagged; the pipeline entry otherwise. */
  async check(api: string, body: Obj, now: () => number): Promise<PluginPipelineEntry> {
    if (!this.cfg) throw badRequest('plugins: the moderation plugin needs a moderation endpoint; the operator sets GATEWAY_MODERATION_URL', { field: 'plugins' });
    const input = requestTexts(api, body).map((s) => s.text).filter((t) => t.trim() !== '');
    const t0 = now();
    const results = input.length === 0 ? [] : await this.call(input);
    const categories = new Set<string>();
    let flagged = false;
    for (const r of results) {
      if (!r.flagged) continue;
      flagged = true;
      for (const [k, v] of Object.entries(r.categories ?? {})) if (v === true) categories.add(k);
    }
    const latency = Math.round(now() - t0);
    if (flagged) {
      const reasons = [...categories];
      throw forbidden(`Flagged by moderation${reasons.length > 0 ? `: ${reasons.join(', ')}` : ''}`, { error_type: 'moderation', reasons, categories: reasons, moderation_latency: latency });
    }
    return { type: 'plugin', name: 'moderation', summary: `Moderation passed (${input.length} text${input.length === 1 ? '' : 's'} checked)`, data: { flagged: false, texts: input.length, latency_ms: latency } };
  }

  private async call(input: string[]): Promise<Array<{ flagged?: boolean; categories?: Record<string, unknown> }>> {
    const cfg = this.cfg!;
    let res: Response;
    try {
      res = await fetch(cfg.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
        body: JSON.stringify({ model: cfg.model, input }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new HttpError(502, `The moderation endpoint could not be reached (${(err as Error).name})`, { error_type: 'moderation_unavailable' });
    }
    const text = await res.text();
    let json: { results?: unknown };
    try {
      json = JSON.parse(text) as { results?: unknown };
    } catch {
      json = {};
    }
    if (!res.ok || !Array.isArray(json.results)) {
      throw new HttpError(502, `The moderation endpoint answered ${res.status} without results`, { error_type: 'moderation_unavailable' });
    }
    return json.results as Array<{ flagged?: boolean; categories?: Record<string, unknown> }>;
  }
}
