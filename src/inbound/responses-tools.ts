/**
 * The Responses API's tool kinds beyond `function` (Codex's), for upstreams that only have function tools
 * (docs/agents.md, "Codex"):
 * - `namespace` tools (`{type:"namespace", name, tools:[…]}`) are flattened to function tools named
 *   `<namespace>__<name>` (made unique and valid), and calls to them are named back (`name` + `namespace`);
 * - `custom` (free-form) tools become a function with one string argument, `input`; a call to one comes back as a
 *   `custom_tool_call` item whose `input` is that string (its grammar, when given, is described to the model);
 * - `additional_tools` input items add their tools to the request's;
 * - `local_shell` and `apply_patch` (tools the client runs) become function tools of the same name whose arguments are
 *   the call's `action` (`{command, working_directory?, timeout_ms?, env?, user?}`) resp. `operation`
 *   (`{type: create_file|update_file|delete_file, path, diff?}`); a call comes back as a `local_shell_call` /
 *   `apply_patch_call` item, and those items and their `*_output` items sent back become the IR call and result;
 * - other hosted tool kinds (`file_search`, `computer_use_preview`, …) and gateway server tools are not function
 *   tools: the former reach a Responses upstream (the body passes through) and are listed as dropped for the others,
 *   the latter run in the gateway's loop.
 * The mapping is a pure function of the request body, so the answer (JSON or stream) maps names back from it.
 */
import { lazyConversation } from '../core/lazy-body.js';
import type { IrTool } from '../core/ir.js';
import { isServerToolType } from '../core/server-tools.js';
import { invalid, isObject, type Json } from './common.js';

export interface MappedTool {
  /** The function name the upstream sees. */
  flat: string;
  /** The tool's own name, and its namespace when it has one. */
  name: string;
  namespace?: string;
  kind: 'function' | 'custom' | 'local_shell' | 'apply_patch';
}

/** The client-run hosted tools translated to function tools, with the arguments the function takes. */
export const CLIENT_TOOLS: Record<'local_shell' | 'apply_patch', { description: string; parameters: Record<string, unknown> }> = {
  local_shell: {
    description: 'Run a command in a local shell on the user\'s machine and get its output.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'array', items: { type: 'string' }, description: 'The program and its arguments, e.g. ["ls", "-la"].' },
        working_directory: { type: 'string' },
        timeout_ms: { type: 'integer' },
        env: { type: 'object', additionalProperties: { type: 'string' } },
        user: { type: 'string' },
      },
      required: ['command'],
    },
  },
  apply_patch: {
    description: 'Create, update or delete a file in the user\'s workspace. For update_file, diff is a V4A diff of the changes; for create_file, the diff holds the whole content as added lines.',
    parameters: {
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'] },
        path: { type: 'string' },
        diff: { type: 'string' },
      },
      required: ['type', 'path'],
    },
  },
};
const isClientTool = (type: unknown): type is keyof typeof CLIENT_TOOLS => type === 'local_shell' || type === 'apply_patch';

export interface ResponsesToolMap {
  /** Upstream function name → the client's tool. */
  byFlat: Map<string, MappedTool>;
  /** `namespace/name` (or `name`) → upstream function name. */
  byName: Map<string, string>;
}

export interface ResponsesTools {
  tools: IrTool[];
  map: ResponsesToolMap;
  /** Tools no function can stand for (by path and type), dropped for non-Responses upstreams. */
  drops: string[];
}

/** The schema of a custom tool seen as a function: one string argument. */
function customSchema(t: Json): Record<string, unknown> {
  const fmt = isObject(t.format) ? t.format : null;
  const desc = fmt && fmt.type === 'grammar' && typeof fmt.definition === 'string' ? `Free-form input (${String(fmt.syntax ?? 'grammar')}):\n${fmt.definition}` : 'Free-form input: the raw text the tool takes (not JSON).';
  return { type: 'object', properties: { input: { type: 'string', description: desc } }, required: ['input'], additionalProperties: false };
}

const key = (name: string, namespace?: string) => (namespace ? `${namespace}/${name}` : name);

/** A valid, unique function name (`[A-Za-z0-9_-]{1,64}`) for a tool. */
function flatName(name: string, namespace: string | undefined, taken: Set<string>): string {
  const base = (namespace ? `${namespace}__${name}` : name).replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60) || 'tool';
  let flat = base;
  for (let n = 2; taken.has(flat); n++) flat = `${base.slice(0, 58)}_${n}`;
  taken.add(flat);
  return flat;
}

/** Every tool of a Responses body (its `tools` and its `additional_tools` input items), as IR function tools. */
export function responsesTools(body: Json): ResponsesTools {
  const out: ResponsesTools = { tools: [], map: { byFlat: new Map(), byName: new Map() }, drops: [] };
  const taken = new Set<string>();
  const add = (t: Json, where: string, namespace?: string) => {
    if (!isObject(t)) throw invalid(`${where} must be an object`);
    if (isServerToolType(t.type)) return; // the gateway's loop runs these (services/server-tools.ts)
    if (t.type === 'namespace' && namespace === undefined) {
      if (typeof t.name !== 'string' || t.name === '') throw invalid(`${where}.name is required`);
      if (!Array.isArray(t.tools)) throw invalid(`${where}.tools must be an array`);
      t.tools.forEach((inner, j) => add(inner as Json, `${where}.tools[${j}]`, t.name as string));
      return;
    }
    if (isClientTool(t.type) && namespace === undefined) {
      if (out.map.byName.has(t.type)) return;
      const flat = flatName(t.type, undefined, taken);
      out.map.byFlat.set(flat, { flat, name: t.type, kind: t.type });
      out.map.byName.set(t.type, flat);
      out.tools.push({ name: flat, ...CLIENT_TOOLS[t.type] });
      return;
    }
    if (t.type !== 'function' && t.type !== 'custom') {
      if (typeof t.type !== 'string') throw invalid(`${where}.type is required`);
      out.drops.push(`${where} (${t.type})`);
      return;
    }
    if (typeof t.name !== 'string' || t.name === '') throw invalid(`${where}.name is required`);
    if (out.map.byName.has(key(t.name, namespace))) return; // declared again (tools and additional_tools)
    const flat = flatName(t.name, namespace, taken);
    const kind = t.type === 'custom' ? 'custom' : 'function';
    out.map.byFlat.set(flat, { flat, name: t.name, kind, ...(namespace ? { namespace } : {}) });
    out.map.byName.set(key(t.name, namespace), flat);
    const tool: IrTool = { name: flat, parameters: kind === 'custom' ? customSchema(t) : isObject(t.parameters) ? t.parameters : { type: 'object', properties: {} } };
    const description = [namespace && typeof t.namespace_description === 'string' ? t.namespace_description : '', typeof t.description === 'string' ? t.description : ''].filter(Boolean).join('\n\n');
    if (description) tool.description = description;
    if (kind === 'function' && typeof t.strict === 'boolean') tool.strict = t.strict;
    out.tools.push(tool);
  };
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) throw invalid('tools must be an array');
    body.tools.forEach((t, i) => add(t as Json, `tools[${i}]`));
  }
  // A lazy input (core/lazy-body.ts) holds `{role, content}` messages only: no additional_tools, nothing to read.
  if (!lazyConversation(body, 'input') && Array.isArray(body.input)) {
    body.input.forEach((item, i) => {
      if (!isObject(item) || item.type !== 'additional_tools') return;
      if (!Array.isArray(item.tools)) throw invalid(`input[${i}].tools must be an array`);
      item.tools.forEach((t, j) => add(t as Json, `input[${i}].tools[${j}]`));
    });
  }
  return out;
}

/** The upstream function name of a tool call item sent back as input (`name` with its `namespace`, if any). */
export function flatOf(map: ResponsesToolMap, name: string, namespace: unknown): string {
  return map.byName.get(key(name, typeof namespace === 'string' && namespace !== '' ? namespace : undefined)) ?? name;
}

/**
 * The upstream function name of an IR call. Chat, Anthropic and Gemini upstreams call the function the gateway made
 * (its flat name); a Responses upstream, which got the tools as sent, names a namespaced tool by its own name and
 * `namespace`, and a custom tool by its own name.
 */
export function flatOfCall(map: ResponsesToolMap | null, name: string, namespace?: string): string {
  if (!map) return name;
  if (namespace !== undefined) return flatOf(map, name, namespace);
  return map.byFlat.has(name) ? name : flatOf(map, name, undefined);
}

/** A custom tool's `input` from the JSON arguments the upstream produced (the raw text when they are not `{input}`). */
export function customInput(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (isObject(v) && typeof v.input === 'string') return v.input;
  } catch {
    /* not JSON: the text itself */
  }
  return args;
}

/** The JSON object of a call's arguments ({} when they are not one). */
function argsObject(args: string): Json {
  try {
    const v: unknown = JSON.parse(args);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** Whether calls to `flat` come back whole (custom, local_shell, apply_patch), not as streamed function arguments. */
export const collectsArguments = (map: ResponsesToolMap | null, flat: string): boolean => {
  const kind = map?.byFlat.get(flat)?.kind;
  return kind !== undefined && kind !== 'function';
};

/**
 * The output item of a call to `flat`: a function_call (named back), a custom_tool_call, a local_shell_call (its
 * `action` an `exec` of the arguments) or an apply_patch_call (its `operation` the arguments).
 */
export function callItem(map: ResponsesToolMap | null, id: string, callId: string, flat: string, args: string, status: string): Json {
  const t = map?.byFlat.get(flat);
  if (t?.kind === 'local_shell') return { id, type: 'local_shell_call', call_id: callId, action: { ...argsObject(args), type: 'exec' }, status };
  if (t?.kind === 'apply_patch') return { id, type: 'apply_patch_call', call_id: callId, operation: argsObject(args), status };
  if (t?.kind === 'custom') return { id, type: 'custom_tool_call', call_id: callId, name: t.name, ...(t.namespace ? { namespace: t.namespace } : {}), input: customInput(args), status };
  return { id, type: 'function_call', call_id: callId, name: t?.name ?? flat, ...(t?.namespace ? { namespace: t.namespace } : {}), arguments: args, status };
}
