/**
 * The IR document part in each upstream's own shape (the inline-PDF case of every inbound × upstream pair is in
 * test/fidelity/matrix.test.ts, 'pdf input'): file ids, URLs, text documents, file names, and what an upstream cannot
 * take.
 *   OpenAI chat `file`: https://platform.openai.com/docs/guides/pdf-files
 *   Responses `input_file`: same guide
 *   Anthropic `document`: https://docs.anthropic.com/en/docs/build-with-claude/pdf-support, Files API beta
 *   Gemini `inlineData` / `fileData`: https://ai.google.dev/gemini-api/docs/document-processing
 *   Bedrock Converse `document`: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html
 */
import { describe, expect, it } from 'vitest';
import type { IrDocument } from '../../src/core/ir.js';
import { documentBlock as anthropicDocument, FILES_BETA } from '../../src/providers/anthropic/request.js';
import { anthropicAdapter } from '../../src/providers/anthropic/index.js';
import { documentBlock as bedrockDocument } from '../../src/providers/bedrock/request.js';
import { documentPart as geminiDocument } from '../../src/providers/google/request.js';
import { filePart as chatFile } from '../../src/providers/openai/ir-request.js';
import { inputFile } from '../../src/providers/openai-responses/upstream.js';
import { anthropicDocument as simAnthropic, bedrockDocument as simBedrock, openaiFilePart, responsesFilePart } from '../../src/sim/documents.js';
import { ctx, irRequest } from './anthropic/helpers.js';

const PDF = Buffer.from('%PDF-1.4\n%fake\n').toString('base64');
const inline: IrDocument = { type: 'document', data: PDF, media_type: 'application/pdf', filename: 'paper.pdf' };
const byId: IrDocument = { type: 'document', file_id: 'file-abc123' };
const byUrl: IrDocument = { type: 'document', url: 'https://example.com/a.pdf' };
const text: IrDocument = { type: 'document', data: Buffer.from('plain words').toString('base64'), media_type: 'text/plain', filename: 'notes.txt' };

describe('OpenAI chat: file part', () => {
  it('inline data as a file_data data URL with the file name; a file id; a URL', () => {
    expect(chatFile(inline, false)).toEqual({ type: 'file', file: { filename: 'paper.pdf', file_data: `data:application/pdf;base64,${PDF}` } });
    expect(chatFile(byId, false)).toEqual({ type: 'file', file: { file_id: 'file-abc123' } });
    expect(chatFile(byUrl, false)).toEqual({ type: 'file', file: { file_data: 'https://example.com/a.pdf' } });
    expect(chatFile({ ...inline, cache_control: { type: 'ephemeral' } }, true).cache_control).toEqual({ type: 'ephemeral' });
    expect(openaiFilePart(chatFile(inline, false), 'p')).toBeNull();
  });
});

describe('OpenAI Responses: input_file', () => {
  it('file_data, file_id or file_url', () => {
    expect(inputFile(inline)).toEqual({ type: 'input_file', filename: 'paper.pdf', file_data: `data:application/pdf;base64,${PDF}` });
    expect(inputFile(byId)).toEqual({ type: 'input_file', file_id: 'file-abc123' });
    expect(inputFile(byUrl)).toEqual({ type: 'input_file', file_url: 'https://example.com/a.pdf' });
    for (const d of [inline, byId, byUrl]) expect(responsesFilePart(inputFile(d), 'p')).toBeNull();
  });
});

describe('Anthropic: document block', () => {
  it('base64 PDF source with the title; text as a text source; file and URL sources', () => {
    expect(anthropicDocument(inline)).toEqual({ type: 'document', title: 'paper.pdf', source: { type: 'base64', media_type: 'application/pdf', data: PDF } });
    expect(anthropicDocument(text)).toEqual({ type: 'document', title: 'notes.txt', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } });
    expect(anthropicDocument(byId)).toEqual({ type: 'document', source: { type: 'file', file_id: 'file-abc123' } });
    expect(anthropicDocument(byUrl)).toEqual({ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } });
    expect(anthropicDocument({ type: 'document', url: `data:application/pdf;base64,${PDF}` }).source).toEqual({ type: 'base64', media_type: 'application/pdf', data: PDF });
    expect(() => anthropicDocument({ type: 'document' })).toThrow(/neither data, file id nor url/);
  });

  it('a document by file id adds the Files API beta (after the client betas); the simulator refuses a file source without it', () => {
    const withFile = irRequest({ messages: [{ role: 'user', content: [byId, { type: 'text', text: 'summarize' }] }], anthropic_beta: ['interleaved-thinking-2025-05-14'] });
    const r = anthropicAdapter.buildRequest(withFile, ctx());
    expect(r.headers['anthropic-beta']).toBe(`interleaved-thinking-2025-05-14,${FILES_BETA}`);
    expect(anthropicAdapter.buildRequest(irRequest({ messages: [{ role: 'user', content: [inline] }] }), ctx()).headers['anthropic-beta']).toBeUndefined();
    const block = anthropicDocument(byId);
    expect(simAnthropic(block, 'm', '')).toMatch(/files-api-2025-04-14 beta/);
    expect(simAnthropic(block, 'm', `x, ${FILES_BETA}`)).toBeNull();
    expect(simAnthropic(anthropicDocument(inline), 'm', '')).toBeNull();
    expect(simAnthropic({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: Buffer.from('not a pdf').toString('base64') } }, 'm', '')).toMatch(/not valid/);
  });
});

describe('Gemini: inlineData / fileData', () => {
  it('inline data as inlineData (PDF when the type is unknown); a file URI or URL as fileData', () => {
    expect(geminiDocument(inline)).toEqual({ inlineData: { mimeType: 'application/pdf', data: PDF } });
    expect(geminiDocument({ type: 'document', data: PDF })).toEqual({ inlineData: { mimeType: 'application/pdf', data: PDF } });
    expect(geminiDocument({ type: 'document', file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc', media_type: 'application/pdf' })).toEqual({
      fileData: { mimeType: 'application/pdf', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' },
    });
    expect(geminiDocument(byUrl)).toEqual({ fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' } });
  });
});

describe('Bedrock Converse: document block', () => {
  it('format from the media type, a name Bedrock accepts, bytes inline', () => {
    expect(bedrockDocument(inline)).toEqual({ document: { format: 'pdf', name: 'paper-pdf', source: { bytes: PDF } } });
    expect(bedrockDocument(text)).toEqual({ document: { format: 'txt', name: 'notes-txt', source: { bytes: text.data } } });
    expect(bedrockDocument({ ...inline, filename: 'Q3   report (final) [v2]_x.pdf' }).document).toMatchObject({ name: 'Q3 report (final) [v2]-x-pdf' });
    expect(bedrockDocument({ type: 'document', data: PDF })).toEqual({ document: { format: 'pdf', name: 'document', source: { bytes: PDF } } });
    for (const d of [inline, text, { ...inline, filename: 'Q3   report (final) [v2]_x.pdf' }]) expect(simBedrock(bedrockDocument(d))).toBeNull();
  });

  it('a file id or URL, or a type Converse does not read, is a 400', () => {
    expect(() => bedrockDocument(byId)).toThrow(/inline only/);
    expect(() => bedrockDocument(byUrl)).toThrow(/inline only/);
    expect(() => bedrockDocument({ type: 'document', data: PDF, media_type: 'application/zip' })).toThrow(/does not read documents of type application\/zip/);
    expect(simBedrock({ document: { format: 'pdf', name: 'a.pdf', source: { bytes: PDF } } })).toMatch(/file name/);
  });
});
