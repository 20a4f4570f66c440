/**
 * IR stream events → the typed Responses SSE: `event: <type>` + `data: {type, sequence_number, …}`.
 *
 * Sequence: `response.created`, `response.in_progress`; then per output item `response.output_item.added`, its
 * content events, `response.output_item.done`; finally `response.completed` (or `response.incomplete` /
 * `response.failed`) carrying the full Response with usage, cost and `gateway_metadata`, then `data: [DONE]`.
 *
 * Items: a reasoning item per IR reasoning part (summary part + `reasoning_summary_text` deltas; the signature and
 * encrypted content land on the item), one message item per run of text/refusal parts (a content part per IR part,
 * `output_text` or `refusal` deltas), a function_call item per tool call (`function_call_arguments` deltas), an
 * image_generation_call item per generated image (its `image_generation_call.*` events; opened at its first partial
 * image when the upstream streams previews, each a `response.image_generation_call.partial_image`). Items
 * are sequential: a new item closes the open one. The final Response is built from the same snapshot, so a late
 * signature or late arguments still reach it.
 */
import type { IrFinishReason, IrStreamEvent, IrUsage } from '../core/ir.js';
import type { AnswerMeta, StreamEncoder } from '../core/adapters.js';
import { idSuffix, sse, type Json } from './common.js';
import { finishStatus, imageItem, itemId, responseErrorCode, responseObject } from './responses-output.js';
import { callItem, customInput, flatOfCall, type ResponsesToolMap } from './responses-tools.js';

/** `custom_tool_call`: a call to a free-form tool, whose input is sent whole when the call ends (responses-tools.ts). */
type ItemKind = 'message' | 'reasoning' | 'function_call' | 'custom_tool_call' | 'local_shell_call' | 'apply_patch_call';

interface OpenItem {
  kind: ItemKind;
  outputIndex: number;
  item: Json;
  /** IR part index (reasoning, function_call). */
  irIndex: number;
  /** Message: the open content part. */
  part: { irIndex: number; contentIndex: number; kind: 'output_text' | 'refusal'; text: string } | null;
  /** Reasoning: whether the summary part was added. */
  summaryOpen: boolean;
}

export class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0;
  private done = false;
  private readonly output: Json[] = [];
  private open: OpenItem | null = null;
  /** IR index → output index of a closed reasoning / function_call item (late signature or arguments). */
  private closed = new Map<number, { kind: ItemKind; outputIndex: number }>();
  private usage: IrUsage | null = null;
  private finishReason: IrFinishReason | null = null;
  private sawTool = false;
  private sawRefusal = false;
  /** Image items opened by partial images and not completed yet, by IR index. */
  private readonly images = new Map<number, { item: Json; ids: { item_id: string; output_index: number; out: string } }>();

  /** Arguments of open custom tool calls (JSON `{input}`), by IR index. */
  private readonly customArgs = new Map<number, string>();
  /** The upstream function name of open calls whose arguments are collected, by IR index. */
  private readonly toolFlat = new Map<number, string>();

  constructor(
    private readonly meta: AnswerMeta,
    private readonly echo: Json,
    /** The request's namespaced and custom tools, named back in the output (null: function tools only). */
    private readonly tools: ResponsesToolMap | null = null,
  ) {}

  private emit(type: string, data: Json): string {
    return sse(type, { type, sequence_number: this.seq++, ...data });
  }

  private snapshot(status: 'in_progress' | 'completed' | 'incomplete' | 'failed', extra: Partial<Parameters<typeof responseObject>[0]> = {}): Json {
    return responseObject({ meta: this.meta, echo: this.echo, status, output: structuredClone(this.output), usage: this.usage, ...extra });
  }

  start(): string {
    const r = this.snapshot('in_progress');
    return this.emit('response.created', { response: r }) + this.emit('response.in_progress', { response: r });
  }

  // ---- items ----

  private openItem(kind: ItemKind, irIndex: number, item: Json): string {
    let out = this.closeItem();
    const outputIndex = this.output.length;
    this.output.push(item);
    this.open = { kind, outputIndex, item, irIndex, part: null, summaryOpen: false };
    out += this.emit('response.output_item.added', { output_index: outputIndex, item: structuredClone(item) });
    return out;
  }

  private closePart(): string {
    const o = this.open;
    if (!o || !o.part) return '';
    const p = o.part;
    o.part = null;
    const ids = { item_id: o.item.id, output_index: o.outputIndex, content_index: p.contentIndex };
    if (p.kind === 'output_text') {
      const part = { type: 'output_text', text: p.text, annotations: [] };
      (o.item.content as Json[])[p.contentIndex] = part;
      return this.emit('response.output_text.done', { ...ids, text: p.text, logprobs: [] }) + this.emit('response.content_part.done', { ...ids, part });
    }
    const part = { type: 'refusal', refusal: p.text };
    (o.item.content as Json[])[p.contentIndex] = part;
    return this.emit('response.refusal.done', { ...ids, refusal: p.text }) + this.emit('response.content_part.done', { ...ids, part });
  }

  private closeItem(): string {
    const o = this.open;
    if (!o) return '';
    let out = '';
    const ids = { item_id: o.item.id, output_index: o.outputIndex };
    if (o.kind === 'message') {
      out += this.closePart();
      o.item.status = 'completed';
    } else if (o.kind === 'reasoning') {
      if (o.summaryOpen) {
        const text = ((o.item.summary as Json[])[0]?.text as string) ?? '';
        out += this.emit('response.reasoning_summary_text.done', { ...ids, summary_index: 0, text });
        out += this.emit('response.reasoning_summary_part.done', { ...ids, summary_index: 0, part: { type: 'summary_text', text } });
      }
      this.closed.set(o.irIndex, { kind: 'reasoning', outputIndex: o.outputIndex });
    } else if (o.kind === 'custom_tool_call') {
      o.item.input = customInput(this.customArgs.get(o.irIndex) ?? '');
      this.customArgs.delete(o.irIndex);
      out += this.emit('response.custom_tool_call_input.done', { ...ids, input: o.item.input });
      o.item.status = 'completed';
      this.closed.set(o.irIndex, { kind: 'custom_tool_call', outputIndex: o.outputIndex });
    } else if (o.kind === 'local_shell_call' || o.kind === 'apply_patch_call') {
      // A client-run tool's call has no argument events: the item is whole in output_item.done (responses-tools.ts).
      const whole = callItem(this.tools, o.item.id as string, o.item.call_id as string, this.toolFlat.get(o.irIndex) ?? '', this.customArgs.get(o.irIndex) ?? '', 'completed');
      for (const k of Object.keys(o.item)) delete o.item[k];
      Object.assign(o.item, whole);
      this.customArgs.delete(o.irIndex);
      this.closed.set(o.irIndex, { kind: o.kind, outputIndex: o.outputIndex });
    } else {
      out += this.emit('response.function_call_arguments.done', { ...ids, name: o.item.name, arguments: o.item.arguments });
      o.item.status = 'completed';
      this.closed.set(o.irIndex, { kind: 'function_call', outputIndex: o.outputIndex });
    }
    this.open = null;
    out += this.emit('response.output_item.done', { output_index: o.outputIndex, item: structuredClone(o.item) });
    return out;
  }

  /** The open message content part for IR part `irIndex` of `kind`, opening the message item / part as needed. */
  private textPart(irIndex: number, kind: 'output_text' | 'refusal'): string {
    const o = this.open;
    if (o?.kind === 'message' && o.part && o.part.irIndex === irIndex && o.part.kind === kind) return '';
    let out = '';
    if (o?.kind === 'message') out += this.closePart();
    else out += this.openItem('message', irIndex, { id: itemId('msg', this.meta, this.output.length), type: 'message', role: 'assistant', status: 'in_progress', content: [] });
    const m = this.open!;
    const content = m.item.content as Json[];
    const contentIndex = content.length;
    const part = kind === 'output_text' ? { type: 'output_text', text: '', annotations: [] } : { type: 'refusal', refusal: '' };
    content.push(part);
    m.part = { irIndex, contentIndex, kind, text: '' };
    out += this.emit('response.content_part.added', { item_id: m.item.id, output_index: m.outputIndex, content_index: contentIndex, part });
    return out;
  }

  private reasoningItem(irIndex: number): string {
    const o = this.open;
    if (o?.kind === 'reasoning' && o.irIndex === irIndex) return '';
    return this.openItem('reasoning', irIndex, { id: itemId('rs', this.meta, this.output.length), type: 'reasoning', summary: [] });
  }

  private toolItem(irIndex: number, id: string, name: string): string {
    const item = callItem(this.tools, itemId('fc', this.meta, this.output.length), id, name, '', 'in_progress');
    if (item.type === 'custom_tool_call' || item.type === 'local_shell_call' || item.type === 'apply_patch_call') {
      this.customArgs.set(irIndex, '');
      this.toolFlat.set(irIndex, name);
      return this.openItem(item.type, irIndex, item);
    }
    return this.openItem('function_call', irIndex, item);
  }

  /**
   * A generated image (docs/images.md): a whole image_generation_call item — added (in progress), the
   * `in_progress`, `generating` and `completed` events OpenAI sends, then done with the base64 image in `result`.
   */
  private image(irIndex: number, b64: string): string {
    const started = this.images.get(irIndex);
    this.images.delete(irIndex);
    let out = started ? '' : this.closeItem();
    const { item, ids } = started ?? this.imageStart();
    if (!started) out += ids.out;
    const id = ids.item_id;
    Object.assign(item, imageItem(id, b64, 'completed'));
    out += this.emit('response.image_generation_call.completed', { item_id: id, output_index: ids.output_index });
    return out + this.emit('response.output_item.done', { output_index: ids.output_index, item: structuredClone(item) });
  }

  /** Opens an image_generation_call item (in progress): its events in `ids.out`. */
  private imageStart(): { item: Json; ids: { item_id: string; output_index: number; out: string } } {
    const outputIndex = this.output.length;
    const id = itemId('ig', this.meta, outputIndex);
    const item = imageItem(id, null, 'in_progress');
    this.output.push(item);
    const ids = { item_id: id, output_index: outputIndex };
    let out = this.emit('response.output_item.added', { output_index: outputIndex, item: structuredClone(item) });
    out += this.emit('response.image_generation_call.in_progress', ids);
    out += this.emit('response.image_generation_call.generating', ids);
    return { item, ids: { ...ids, out } };
  }

  /** A partial image (OpenAI's preview while the image is made): the item opened at the first, then its event. */
  private imagePartial(irIndex: number, b64: string, partialIndex: number): string {
    let out = '';
    let started = this.images.get(irIndex);
    if (!started) {
      out += this.closeItem();
      started = this.imageStart();
      this.images.set(irIndex, started);
      out += started.ids.out;
    }
    const { item_id, output_index } = started.ids;
    return out + this.emit('response.image_generation_call.partial_image', { item_id, output_index, partial_image_index: partialIndex, partial_image_b64: b64 });
  }

  // ---- events ----

  event(ev: IrStreamEvent): string {
    if (this.done) return '';
    switch (ev.type) {
      case 'start':
        return '';
      case 'image':
        return this.image(ev.index, ev.data);
      case 'image_partial':
        return this.imagePartial(ev.index, ev.data, ev.partial_index);
      case 'usage':
        this.usage = ev.usage;
        return '';
      case 'text_delta':
      case 'refusal_delta': {
        const kind = ev.type === 'text_delta' ? 'output_text' : 'refusal';
        if (kind === 'refusal') this.sawRefusal = true;
        if (ev.text === '') return '';
        let out = this.textPart(ev.index, kind);
        const m = this.open!;
        const p = m.part!;
        p.text += ev.text;
        const ids = { item_id: m.item.id, output_index: m.outputIndex, content_index: p.contentIndex };
        const content = m.item.content as Json[];
        if (kind === 'output_text') {
          content[p.contentIndex] = { type: 'output_text', text: p.text, annotations: [] };
          out += this.emit('response.output_text.delta', { ...ids, delta: ev.text, logprobs: [] });
        } else {
          content[p.contentIndex] = { type: 'refusal', refusal: p.text };
          out += this.emit('response.refusal.delta', { ...ids, delta: ev.text });
        }
        return out;
      }
      case 'reasoning_delta': {
        if (ev.text === '') return '';
        let out = this.reasoningItem(ev.index);
        const o = this.open!;
        const ids = { item_id: o.item.id, output_index: o.outputIndex, summary_index: 0 };
        const summary = o.item.summary as Json[];
        if (!o.summaryOpen) {
          o.summaryOpen = true;
          summary.push({ type: 'summary_text', text: '' });
          out += this.emit('response.reasoning_summary_part.added', { ...ids, part: { type: 'summary_text', text: '' } });
        }
        summary[0] = { type: 'summary_text', text: (summary[0].text as string) + ev.text };
        out += this.emit('response.reasoning_summary_text.delta', { ...ids, delta: ev.text });
        return out;
      }
      case 'reasoning_signature': {
        const late = this.closed.get(ev.index);
        if (late?.kind === 'reasoning' && !(this.open?.kind === 'reasoning' && this.open.irIndex === ev.index)) {
          this.output[late.outputIndex].signature = ev.signature;
          return '';
        }
        const out = this.reasoningItem(ev.index);
        this.open!.item.signature = ev.signature;
        return out;
      }
      case 'redacted_reasoning': {
        const o = this.open;
        if (o?.kind === 'reasoning' && o.item.encrypted_content === undefined) {
          o.item.encrypted_content = ev.data;
          return '';
        }
        return this.openItem('reasoning', ev.index, { id: itemId('rs', this.meta, this.output.length), type: 'reasoning', summary: [], encrypted_content: ev.data });
      }
      case 'tool_call_start':
        this.sawTool = true;
        if ((this.open?.kind === 'function_call' || this.open?.kind === 'custom_tool_call' || this.open?.kind === 'local_shell_call' || this.open?.kind === 'apply_patch_call') && this.open.irIndex === ev.index) return '';
        return this.toolItem(ev.index, ev.id, flatOfCall(this.tools, ev.name, ev.namespace));
      case 'tool_call_delta': {
        this.sawTool = true;
        // A custom tool's input is the `input` string of the JSON arguments: collected, sent whole at the end.
        if (this.customArgs.has(ev.index)) {
          this.customArgs.set(ev.index, this.customArgs.get(ev.index)! + ev.arguments);
          return '';
        }
        if (ev.arguments === '' && this.open?.kind === 'function_call' && this.open.irIndex === ev.index) return '';
        const late = this.closed.get(ev.index);
        if (late?.kind === 'function_call' && !(this.open?.kind === 'function_call' && this.open.irIndex === ev.index)) {
          const item = this.output[late.outputIndex];
          item.arguments = (item.arguments as string) + ev.arguments;
          return this.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: late.outputIndex, delta: ev.arguments });
        }
        let out = '';
        if (!(this.open?.kind === 'function_call' && this.open.irIndex === ev.index)) out += this.toolItem(ev.index, `call_${idSuffix(this.meta.id)}_${ev.index}`, '');
        if (ev.arguments === '') return out;
        const o = this.open!;
        o.item.arguments = (o.item.arguments as string) + ev.arguments;
        return out + this.emit('response.function_call_arguments.delta', { item_id: o.item.id, output_index: o.outputIndex, delta: ev.arguments });
      }
      case 'part_end': {
        const o = this.open;
        if (!o) return '';
        if (o.kind === 'message') return o.part?.irIndex === ev.index ? this.closePart() : '';
        return o.irIndex === ev.index ? this.closeItem() : '';
      }
      case 'finish':
        this.finishReason = ev.finish_reason;
        return this.closeItem();
      case 'error':
        return this.error(ev.status, ev.message, ev.error_type, this.meta);
    }
  }

  finish(usage: IrUsage | null, meta: AnswerMeta): string {
    if (this.done) return '';
    let out = this.closeItem();
    this.done = true;
    if (usage) this.usage = usage;
    if (!this.usage) this.usage = { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
    let finish: IrFinishReason = this.finishReason ?? (this.sawTool ? 'tool_calls' : 'stop');
    if (finish === 'stop' && this.sawRefusal) finish = 'content_filter';
    const st = finishStatus(finish);
    const response = responseObject({
      meta,
      echo: this.echo,
      status: st.status,
      output: this.output,
      usage: this.usage,
      incomplete_details: st.incomplete_details,
      error: st.error,
      error_type: st.status === 'failed' ? 'provider_unavailable' : undefined,
    });
    const type = st.status === 'completed' ? 'response.completed' : st.status === 'incomplete' ? 'response.incomplete' : 'response.failed';
    out += this.emit(type, { response });
    return out + 'data: [DONE]\n\n';
  }

  error(status: number, message: string, errorType: string, meta: AnswerMeta): string {
    if (this.done) return '';
    this.done = true;
    // The open item stays as it was (status in_progress); the failed Response carries what was produced.
    const code = responseErrorCode(status, errorType);
    let out = this.emit('error', { code, message, param: null });
    const response = responseObject({
      meta,
      echo: this.echo,
      status: 'failed',
      output: this.output,
      usage: this.usage,
      error: { code, message },
      error_type: errorType || undefined,
    });
    out += this.emit('response.failed', { response });
    return out + 'data: [DONE]\n\n';
  }
}
