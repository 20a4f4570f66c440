/**
 * A simulated OpenAI moderation API (under `/<provider>/…` like the other protocols), for the gateway's `moderation`
 * plugin:
 *
 *   POST /v1/moderations   `{model?, input: string | string[]}` → `{id, model, results: [{flagged, categories,
 *                          category_scores}]}`, one result per input
 *
 * Deterministic: an input is flagged for a category when it contains one of that category's marker words
 * (SIM_MODERATION_MARKERS, exported for tests); scores are 0.99 for a hit and 0.001 otherwise. The usual knobs apply.
 */
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Reply } from './protocol.js';

export const SIM_MODERATION_MARKERS: Record<string, string[]> = {
  violence: ['kill', 'murder', 'attack'],
  harassment: ['idiot', 'loser'],
  'self-harm': ['self-harm'],
  illicit: ['counterfeit', 'launder'],
};
const CATEGORIES = ['harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic'];

const invalid = (ctx: EndpointContext, message: string, param: string | null): JsonReply => openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code: null });

function moderate(ctx: EndpointContext): Reply {
  const b = ctx.body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object') return invalid(ctx, 'The request body must be a JSON object.', null);
  const inputs = typeof b.input === 'string' ? [b.input] : Array.isArray(b.input) && b.input.every((x) => typeof x === 'string') ? (b.input as string[]) : null;
  if (!inputs || inputs.length === 0) return invalid(ctx, 'input must be a string or a non-empty list of strings', 'input');
  const results = inputs.map((text) => {
    const lower = text.toLowerCase();
    const categories: Record<string, boolean> = {};
    const scores: Record<string, number> = {};
    for (const c of CATEGORIES) {
      const hit = (SIM_MODERATION_MARKERS[c] ?? []).some((w) => new RegExp(`\\b${w}\\b`).test(lower));
      categories[c] = hit;
      scores[c] = hit ? 0.99 : 0.001;
    }
    return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores };
  });
  const body = { id: `modr-sim${ctx.rid}`, model: typeof b.model === 'string' ? b.model : 'omni-moderation-latest', results };
  return { kind: 'json', status: 200, body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, chunks: 1 };
}

export const moderationEndpoints: Endpoint[] = [{ method: 'POST', path: '/v1/moderations', protocol: openaiProtocol, modelCall: true, handle: moderate }];
