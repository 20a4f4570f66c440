/**
 * `hasFileParts`, the check every inference request goes through (services/plugins/file-inputs.ts): true exactly when
 * the body holds a part the file-inputs step rewrites, in each API's shape; text-only conversations (strings or text
 * parts) are false.
 */
import { describe, expect, it } from 'vitest';
import { hasFileParts } from '../../src/services/plugins/file-inputs.js';

const text = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `turn ${i}` }] }));

describe('hasFileParts', () => {
  it('chat: file and stored-image parts, anywhere in the conversation', () => {
    expect(hasFileParts('chat', { messages: [{ role: 'user', content: 'hello' }] })).toBe(false);
    expect(hasFileParts('chat', { messages: text(50) })).toBe(false);
    expect(hasFileParts('chat', { messages: [...text(5), { role: 'user', content: [{ type: 'file', file: { file_id: 'gw_file_1' } }] }] })).toBe(true);
    expect(hasFileParts('chat', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'gw_file_2' } }] }] })).toBe(true);
    expect(hasFileParts('chat', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] })).toBe(false);
    expect(hasFileParts('chat', { messages: [null, 'x', { role: 'user', content: [null, { type: 'file', file: { file_data: 'data:application/pdf;base64,AAAA' } }] }] })).toBe(true);
    expect(hasFileParts('chat', { messages: 'not a list' })).toBe(false);
  });

  it('messages, responses and gemini shapes', () => {
    expect(hasFileParts('messages', { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'gw_file_3' } }] }] })).toBe(true);
    expect(hasFileParts('messages', { messages: text(3) })).toBe(false);
    expect(hasFileParts('responses', { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'gw_file_4' }] }] })).toBe(true);
    expect(hasFileParts('responses', { input: 'hello' })).toBe(false);
    expect(hasFileParts('gemini', { contents: [{ role: 'user', parts: [{ fileData: { fileUri: 'gw_file_5' } }] }] })).toBe(true);
    expect(hasFileParts('gemini', { contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'application/pdf', data: 'AAAA' } }] }] })).toBe(true);
    expect(hasFileParts('gemini', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })).toBe(false);
    expect(hasFileParts('embeddings', { input: [{ content: [{ type: 'input_file', file_id: 'gw_file_6' }] }] })).toBe(false);
  });
});
