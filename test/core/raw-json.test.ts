import { describe, expect, it } from 'vitest';
import { forgetRaw, rawBody, rawField, rawMessages, rememberRaw, spliceRaw, topLevelValue, withRawMessages } from '../../src/core/raw-json.js';

const raw = (s: string) => Buffer.from(s, 'utf8');

describe('topLevelValue: the raw bytes of a top-level field', () => {
  it('finds a value past strings holding quotes, escapes and brackets', () => {
    const text = ' { "a" : "x\\"}]{[\\\\" , "messages" :\n[ {"role":"user","content":"he said \\"}\\" ok"} , {"n":[1,{"b":null}]} ] ,"z":1e3 }';
    const got = topLevelValue(raw(text), 'messages')!.toString();
    expect(JSON.parse(got)).toEqual(JSON.parse(text).messages);
    expect(topLevelValue(raw(text), 'z')!.toString()).toBe('1e3');
    expect(topLevelValue(raw(text), 'missing')).toBeNull();
  });

  it('takes the last of duplicate keys (as JSON.parse does), keys with escapes decoded', () => {
    const text = '{"messages":[1],"mess\\u0061ges":[2, "é😀"]}';
    expect(JSON.parse(topLevelValue(raw(text), 'messages')!.toString())).toEqual(JSON.parse(text).messages);
  });

  it('ignores a nested field of the same name', () => {
    const text = '{"metadata":{"messages":[9]},"messages":[]}';
    expect(topLevelValue(raw(text), 'messages')!.toString()).toBe('[]');
  });
});

describe('rawMessages and withRawMessages', () => {
  it('splices the client bytes of messages into the serialized fields', () => {
    const text = '{"model":"a","messages":[{"role":"user","content":"x\\u0000y"}],"temperature":0.5}';
    const body = JSON.parse(text) as Record<string, unknown>;
    rememberRaw(body, raw(text));
    const m = rawMessages(body)!;
    const out = Buffer.concat(withRawMessages({ model: 'up', temperature: 0.5 }, m));
    expect(JSON.parse(out.toString())).toEqual({ model: 'up', temperature: 0.5, messages: body.messages });
    expect(out.toString()).toContain('"content":"x\\u0000y"');
    expect(JSON.parse(Buffer.concat(withRawMessages({}, m)).toString())).toEqual({ messages: body.messages });
  });

  it('gives nothing once the messages array is replaced or the body forgotten, or for a body never recorded', () => {
    const text = '{"messages":[{"role":"user","content":"a"}]}';
    const body = JSON.parse(text) as Record<string, unknown>;
    rememberRaw(body, raw(text));
    expect(rawMessages({ ...body })).toBeNull();
    body.messages = [];
    expect(rawMessages(body)).toBeNull();
    const again = JSON.parse(text) as Record<string, unknown>;
    rememberRaw(again, raw(text));
    forgetRaw(again);
    expect(rawMessages(again)).toBeNull();
  });
});

describe('rawBody', () => {
  it('gives the recorded bytes while messages is the parsed array', () => {
    const text = '{"model":"m","messages":[{"role":"user","content":"a"}]}';
    const body = JSON.parse(text) as Record<string, unknown>;
    rememberRaw(body, raw(text));
    expect(rawBody(body)?.toString()).toBe(text);
    body.messages = [];
    expect(rawBody(body)).toBeNull();
  });
});

describe('rawField and spliceRaw (Messages and Responses passthrough)', () => {
  const text = '{"model":"a","input":[ {"role":"user","content":"caf\\u00e9 \\/"} ],"models":["a"],"max_tokens":5}';
  const parsed = () => {
    const body = JSON.parse(text) as Record<string, unknown>;
    rememberRaw(body, raw(text));
    return body;
  };

  it('splices the client bytes of `input` after the fields the gateway sets', () => {
    const body = parsed();
    expect(rawField(body, 'input')!.toString()).toBe('[ {"role":"user","content":"caf\\u00e9 \\/"} ]');
    const out = { model: 'up', input: body.input, stream: false };
    const parts = spliceRaw(body, out, 'input') as Buffer[];
    expect(Array.isArray(parts)).toBe(true);
    const sent = Buffer.concat(parts).toString();
    expect(sent).toContain('"caf\\u00e9 \\/"');
    expect(JSON.parse(sent)).toEqual({ model: 'up', stream: false, input: body.input });
  });

  it('serializes when the field is not the parsed one, or the body was never recorded', () => {
    const body = parsed();
    const changed = { model: 'up', input: [...(body.input as unknown[])] };
    expect(spliceRaw(body, changed, 'input')).toBe(JSON.stringify(changed));
    body.input = [];
    expect(rawField(body, 'input')).toBeNull();
    expect(rawBody(body)).toBeNull();
    const plain = { model: 'a', input: [{ role: 'user', content: 'x' }] };
    expect(spliceRaw(plain, { input: plain.input }, 'input')).toBe(JSON.stringify({ input: plain.input }));
  });
});
