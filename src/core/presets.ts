/**
 * Presets: turning a saved inference body into a version's configuration, and merging a preset into a request.
 * Pure functions.
 */

export type PresetSource = 'responses' | 'chat' | 'messages';

/** Fields that are per-call content, never configuration: dropped silently when saving. */
const DROPPED = new Set(['input', 'messages', 'prompt', 'stream', 'stream_options', 'preset']);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

/** Splits an inference body into the version's system prompt and its config. */
export function presetFromBody(source: PresetSource, body: Record<string, unknown>): { system_prompt: string | null; config: Record<string, unknown> } {
  let system: string | null = null;
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (DROPPED.has(k) || v === undefined) continue;
    if (source === 'responses' && k === 'instructions') {
      system = typeof v === 'string' ? v : null;
      continue;
    }
    if (source === 'messages' && k === 'system') {
      system = textOf(v) || null;
      continue;
    }
    config[k] = v;
  }
  if (source === 'chat' && Array.isArray(body.messages)) {
    const parts = (body.messages as Array<{ role?: string; content?: unknown }>).filter((m) => m?.role === 'system').map((m) => textOf(m.content));
    if (parts.length > 0) system = parts.join('\n\n');
  }
  return { system_prompt: system, config };
}

type Tool = Record<string, unknown>;

function toolIdentity(t: Tool): string {
  const type = String(t.type ?? '');
  if (type === 'function') {
    const fn = t.function as { name?: string } | undefined;
    return `function:${fn?.name ?? (t.name as string | undefined) ?? ''}`;
  }
  const params = t.parameters as { name?: string } | undefined;
  return params?.name ? `${type}:${params.name}` : type;
}

/**
 * Applies a preset to a request body: request fields win (shallow merge); tools are unioned with preset tools first,
 * a request tool replacing the preset tool of the same identity.
 */
export function mergePreset(config: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...config };
  for (const [k, v] of Object.entries(body)) if (v !== undefined) merged[k] = v;
  const presetTools = Array.isArray(config.tools) ? (config.tools as Tool[]) : null;
  const requestTools = Array.isArray(body.tools) ? (body.tools as Tool[]) : null;
  if (presetTools && requestTools) {
    const byId = new Map<string, Tool>();
    for (const t of presetTools) byId.set(toolIdentity(t), t);
    for (const t of requestTools) byId.set(toolIdentity(t), t);
    merged.tools = [...byId.values()];
  }
  return merged;
}

/** `@preset/<slug>`, `<model>@preset/<slug>` or a plain model id. */
export function parsePresetModel(model: string | undefined): { model: string | undefined; preset: string | undefined } {
  if (!model) return { model, preset: undefined };
  const i = model.indexOf('@preset/');
  if (i < 0) return { model, preset: undefined };
  return { model: i === 0 ? undefined : model.slice(0, i), preset: model.slice(i + '@preset/'.length) || undefined };
}
