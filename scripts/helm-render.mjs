/**
 * A small renderer of Helm chart templates for `npm run deploy:check`, where no Helm binary can be installed: Go
 * template actions (if / else if / else, range with $k, $v, with, define, comments, whitespace trimming) and the Sprig
 * and Helm functions the chart uses (include, toYaml, nindent, indent, quote, default, required, printf, print, trunc,
 * trimSuffix, contains, replace, eq, ne, gt, and, or, not, int, toString, b64enc, sha256sum). Anything else is an
 * error naming the function, so that the chart stays within what is checked here.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';

// ---- lexing and parsing -------------------------------------------------------------------------------------------

function tokenize(src, file) {
  const out = [];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    if (open < 0) {
      out.push({ text: src.slice(i) });
      break;
    }
    out.push({ text: src.slice(i, open) });
    const close = src.indexOf('}}', open);
    if (close < 0) throw new Error(`${file}: unclosed {{`);
    let body = src.slice(open + 2, close);
    const trimLeft = body.startsWith('-');
    const trimRight = body.endsWith('-');
    if (trimLeft) body = body.slice(1);
    if (trimRight) body = body.slice(0, -1);
    out.push({ action: body.trim(), trimLeft, trimRight });
    i = close + 2;
  }
  for (let k = 0; k < out.length; k++) {
    const t = out[k];
    if (t.action === undefined) continue;
    if (t.trimLeft && out[k - 1]?.text !== undefined) out[k - 1].text = out[k - 1].text.replace(/\s+$/, '');
    if (t.trimRight && out[k + 1]?.text !== undefined) out[k + 1].text = out[k + 1].text.replace(/^\s+/, '');
  }
  return out.filter((t) => t.text === undefined || t.text !== '').filter((t) => !(t.action && t.action.startsWith('/*')));
}

/** Splits an action into words: strings, parentheses and pipes kept apart. */
function words(s) {
  const out = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|\(|\)|\||:=|,|[^\s()|,]+)/gy;
  let m;
  while ((m = re.exec(s)) && m[0] !== '') out.push(m[1]);
  return out;
}

/** Parses a pipeline from words: [[operand, …], …] commands separated by pipes; operands may be nested pipelines. */
function parsePipeline(ws, pos = { i: 0 }, closing = null) {
  const cmds = [[]];
  while (pos.i < ws.length) {
    const w = ws[pos.i++];
    if (w === closing) return cmds;
    if (w === '|') cmds.push([]);
    else if (w === '(') cmds[cmds.length - 1].push({ pipe: parsePipeline(ws, pos, ')') });
    else cmds[cmds.length - 1].push({ word: w });
  }
  if (closing) throw new Error(`missing ${closing}`);
  return cmds;
}

function parse(tokens, file) {
  const root = { kind: 'list', items: [] };
  const stack = [root];
  const defines = {};
  const top = () => stack[stack.length - 1];
  for (const t of tokens) {
    if (t.text !== undefined) {
      top().items.push({ kind: 'text', text: t.text });
      continue;
    }
    const a = t.action;
    const kw = /^(if|else if|else|end|range|with|define)\b\s*(.*)$/s.exec(a);
    if (!kw) {
      top().items.push({ kind: 'out', pipe: parsePipeline(words(a)) });
      continue;
    }
    const [, k, rest] = kw;
    if (k === 'if' || k === 'with') {
      const node = { kind: k, branches: [{ pipe: parsePipeline(words(rest)), body: { kind: 'list', items: [] } }], otherwise: null };
      top().items.push(node);
      stack.push(node.branches[0].body);
      stack[stack.length - 1].owner = node;
    } else if (k === 'range') {
      const ws = words(rest);
      const assign = ws.indexOf(':=');
      const vars = assign < 0 ? [] : ws.slice(0, assign).filter((w) => w !== ',');
      const node = { kind: 'range', vars, pipe: parsePipeline(assign < 0 ? ws : ws.slice(assign + 1)), body: { kind: 'list', items: [] }, otherwise: null };
      top().items.push(node);
      stack.push(node.body);
      node.body.owner = node;
    } else if (k === 'define') {
      const name = JSON.parse(rest.trim());
      const node = { kind: 'list', items: [] };
      defines[name] = node;
      stack.push(node);
      node.owner = { kind: 'define' };
    } else if (k === 'else if' || k === 'else') {
      const body = stack.pop();
      const owner = body?.owner;
      if (!owner || owner.kind === 'define') throw new Error(`${file}: ${k} outside a block`);
      const next = { kind: 'list', items: [], owner };
      if (k === 'else if') owner.branches.push({ pipe: parsePipeline(words(rest)), body: next });
      else owner.otherwise = next;
      stack.push(next);
    } else {
      if (stack.length < 2) throw new Error(`${file}: end without a block`);
      stack.pop();
    }
  }
  if (stack.length !== 1) throw new Error(`${file}: unclosed block`);
  return { root, defines };
}

// ---- evaluation -------------------------------------------------------------------------------------------------

const empty = (v) => v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

function toText(v) {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') throw new Error(`cannot print a ${Array.isArray(v) ? 'list' : 'map'} (use toYaml)`);
  return String(v);
}

const indentText = (n, s) => s.split('\n').map((l) => ' '.repeat(n) + l).join('\n');

function goSprintf(format, args) {
  let k = 0;
  return format.replace(/%[sdv%]/g, (m) => (m === '%%' ? '%' : toText(args[k++])));
}

export class Renderer {
  constructor(defines, ctx) {
    this.defines = defines;
    this.root = ctx;
    this.fns = {
      include: (name, dot) => {
        if (!this.defines[name]) throw new Error(`include: no template "${name}"`);
        return this.run(this.defines[name], dot, {});
      },
      toYaml: (v) => (v === undefined || v === null ? 'null' : stringify(v, { lineWidth: 0 }).replace(/\n$/, '')),
      nindent: (n, s) => `\n${indentText(n, toText(s))}`,
      indent: (n, s) => indentText(n, toText(s)),
      quote: (...vs) => vs.map((v) => JSON.stringify(toText(v))).join(' '),
      default: (def, v) => (empty(v) ? def : v),
      required: (msg, v) => {
        if (empty(v)) throw new Error(`required: ${msg}`);
        return v;
      },
      printf: (f, ...args) => goSprintf(f, args),
      print: (...args) => args.map(toText).join(''),
      trunc: (n, s) => toText(s).slice(0, n),
      trimSuffix: (suffix, s) => (toText(s).endsWith(suffix) ? toText(s).slice(0, -suffix.length) : toText(s)),
      contains: (sub, s) => toText(s).includes(sub),
      replace: (from, to, s) => toText(s).split(from).join(to),
      eq: (a, ...bs) => bs.some((b) => a === b),
      ne: (a, b) => a !== b,
      gt: (a, b) => a > b,
      and: (...vs) => vs.find((v) => empty(v)) ?? vs[vs.length - 1],
      or: (...vs) => vs.find((v) => !empty(v)) ?? vs[vs.length - 1],
      not: (v) => empty(v),
      int: (v) => Math.trunc(Number(v) || 0),
      toString: (v) => toText(v),
      b64enc: (v) => Buffer.from(toText(v)).toString('base64'),
      sha256sum: (v) => createHash('sha256').update(toText(v)).digest('hex'),
    };
  }

  operand(o, dot, vars) {
    if (o.pipe) return this.pipeline(o.pipe, dot, vars);
    const w = o.word;
    if (w.startsWith('"')) return JSON.parse(w);
    if (/^-?\d+$/.test(w)) return Number(w);
    if (w === 'true' || w === 'false') return w === 'true';
    if (w === 'nil') return null;
    let base;
    let path;
    if (w === '.') return dot;
    if (w.startsWith('$')) {
      const [name, ...rest] = w.split('.');
      base = name === '$' ? this.root : vars[name];
      if (name !== '$' && !(name in vars)) throw new Error(`undefined variable ${name}`);
      path = rest;
    } else if (w.startsWith('.')) {
      base = dot;
      path = w.slice(1).split('.');
    } else {
      throw new Error(`function "${w}" is not supported by this renderer`);
    }
    for (const p of path) base = base == null ? undefined : base[p];
    return base;
  }

  command(cmd, dot, vars, piped) {
    const [head, ...args] = cmd;
    if (head.word && this.fns[head.word]) {
      const vals = args.map((a) => this.operand(a, dot, vars));
      if (piped !== undefined) vals.push(piped.value);
      return this.fns[head.word](...vals);
    }
    if (args.length || piped !== undefined) throw new Error(`"${head.word ?? '(…)'}" is not a function`);
    return this.operand(head, dot, vars);
  }

  pipeline(cmds, dot, vars) {
    let piped;
    for (const cmd of cmds) piped = { value: this.command(cmd, dot, vars, piped) };
    return piped.value;
  }

  run(node, dot, vars) {
    let out = '';
    for (const n of node.items) {
      if (n.kind === 'text') out += n.text;
      else if (n.kind === 'out') out += toText(this.pipeline(n.pipe, dot, vars));
      else if (n.kind === 'if' || n.kind === 'with') {
        let done = false;
        for (const b of n.branches) {
          const v = this.pipeline(b.pipe, dot, vars);
          if (!empty(v)) {
            out += this.run(b.body, n.kind === 'with' ? v : dot, vars);
            done = true;
            break;
          }
        }
        if (!done && n.otherwise) out += this.run(n.otherwise, dot, vars);
      } else if (n.kind === 'range') {
        const v = this.pipeline(n.pipe, dot, vars);
        const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : v && typeof v === 'object' ? Object.keys(v).sort().map((k) => [k, v[k]]) : [];
        if (entries.length === 0 && n.otherwise) out += this.run(n.otherwise, dot, vars);
        for (const [k, x] of entries) {
          const inner = { ...vars };
          if (n.vars.length === 1) inner[n.vars[0]] = x;
          if (n.vars.length === 2) Object.assign(inner, { [n.vars[0]]: k, [n.vars[1]]: x });
          out += this.run(n.body, x, inner);
        }
      }
    }
    return out;
  }
}

function merge(base, over) {
  if (over === undefined) return base;
  if (base && over && typeof base === 'object' && typeof over === 'object' && !Array.isArray(base) && !Array.isArray(over)) {
    const out = { ...base };
    for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
    return out;
  }
  return over;
}

/** Renders the chart with values.yaml merged with `overrides`: [{file, text}] per template, as `helm template` would. */
export function renderChart(chartDir, overrides = {}, release = { Name: 'gw', Namespace: 'default' }) {
  const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'));
  const values = merge(parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')), overrides);
  const name = chart.name;
  const defines = {};
  const files = [];
  for (const f of readdirSync(join(chartDir, 'templates')).sort()) {
    const full = `${name}/templates/${f}`;
    const parsed = parse(tokenize(readFileSync(join(chartDir, 'templates', f), 'utf8'), full), full);
    Object.assign(defines, parsed.defines);
    defines[full] = parsed.root;
    files.push({ file: f, full, root: parsed.root });
  }
  const ctx = {
    Values: values,
    Release: { Service: 'Helm', Revision: 1, IsInstall: true, IsUpgrade: false, ...release },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion, Description: chart.description },
    Template: { BasePath: `${name}/templates` },
    Capabilities: {},
  };
  const r = new Renderer(defines, ctx);
  return files
    .filter((f) => !basename(f.file).startsWith('_'))
    .map((f) => {
      try {
        return { file: f.file, text: r.run(f.root, ctx, {}) };
      } catch (err) {
        throw new Error(`${f.full}: ${err.message}`);
      }
    });
}
