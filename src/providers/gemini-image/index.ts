/**
 * Gemini image output: `POST {baseUrl}/models/<model>:generateContent` with
 * `generationConfig.responseModalities: ["TEXT", "IMAGE"]` (API key in `x-goog-api-key`).
 *
 * Request: the prompt as a user text part, each reference image as an `inlineData` part (Gemini takes inline data
 * only: an http(s) reference is not accepted, and routing skips the endpoint); `aspect_ratio` as
 * `generationConfig.imageConfig.aspectRatio`, `seed` as `generationConfig.seed` where listed in
 * `supported_parameters`. Gemini returns one image per call: `n` above 1 is not listed, so routing skips it.
 * Answer: the first candidate's `inlineData` parts (`{mimeType, data}`) are the images; text parts are kept as the
 * model's text; `usageMetadata` gives the tokens (images are output tokens). Checked by schema at the edge.
 */
import { Type } from '@sinclair/typebox';
import { parseGoogleError } from '../google/errors.js';
import { geminiHeaders, geminiUrl } from '../google/request.js';
import { Count, Opt, wireCheck } from '../wire-schema.js';
import { fillUnset, imageData, imageJson, invalidImage, parseDataUrl, sniffImageType, type ImageAdapter } from '../images.js';

const Part = Type.Object({
  text: Opt(Type.String()),
  thought: Opt(Type.Boolean()),
  inlineData: Opt(Type.Object({ mimeType: Opt(Type.String()), data: Type.String() })),
});
const ImageResponse = Type.Object({
  candidates: Opt(Type.Array(Type.Object({ content: Opt(Type.Object({ parts: Opt(Type.Array(Part)) })), finishReason: Opt(Type.String()) }))),
  promptFeedback: Opt(Type.Object({ blockReason: Opt(Type.String()) })),
  usageMetadata: Opt(Type.Object({ promptTokenCount: Count, candidatesTokenCount: Count, thoughtsTokenCount: Count })),
  responseId: Opt(Type.String()),
});
const checkImageResponse = wireCheck(ImageResponse, 'response');

export const geminiImageAdapter: ImageAdapter = {
  protocol: 'gemini-image',
  acceptsReferences: (refs) => refs.every((r) => parseDataUrl(r.url) !== null),
  buildRequest(req, ctx) {
    const params = ctx.endpoint.supported_parameters;
    const dropped: string[] = [];
    const parts: Record<string, unknown>[] = [{ text: req.prompt }];
    for (const r of req.references) {
      const d = parseDataUrl(r.url);
      if (d) parts.push({ inlineData: { mimeType: d.mimeType, data: d.data } });
    }
    const generationConfig: Record<string, unknown> = { responseModalities: ['TEXT', 'IMAGE'] };
    if (req.aspect_ratio !== undefined && req.aspect_ratio !== 'auto') {
      if (params.includes('aspect_ratio')) generationConfig.imageConfig = { aspectRatio: req.aspect_ratio };
      else dropped.push('aspect_ratio');
    }
    if (req.seed !== undefined) {
      if (params.includes('seed')) generationConfig.seed = req.seed;
      else dropped.push('seed');
    }
    for (const name of ['size', 'quality', 'background', 'output_format', 'output_compression'] as const) if (req[name] !== undefined) dropped.push(name);
    const body = fillUnset({ contents: [{ role: 'user', parts }], generationConfig }, req.options);
    const ctxModel = ctx.endpoint.upstreamModel;
    return { req: { url: geminiUrl(ctx.provider.baseUrl, ctxModel, false), headers: geminiHeaders(ctx, false), body: JSON.stringify(body) }, dropped };
  },
  parseError: parseGoogleError,
  parse(text) {
    const json = imageJson(text);
    const r = checkImageResponse(json);
    if (r.promptFeedback?.blockReason) throw invalidImage(`Provider blocked the prompt (${r.promptFeedback.blockReason})`);
    const parts = r.candidates?.[0]?.content?.parts ?? [];
    const images = [];
    const texts: string[] = [];
    for (const [i, p] of parts.entries()) {
      if (p.inlineData) {
        const b64 = imageData(p.inlineData.data, `candidates[0].content.parts[${i}].inlineData.data`);
        images.push({ b64, mediaType: p.inlineData.mimeType ?? sniffImageType(b64) });
      } else if (typeof p.text === 'string' && p.thought !== true) texts.push(p.text);
    }
    if (images.length === 0) throw invalidImage(`Provider returned no image${r.candidates?.[0]?.finishReason ? ` (finish reason ${r.candidates[0].finishReason})` : ''}`);
    const u = r.usageMetadata;
    const usage = u ? { promptTokens: u.promptTokenCount ?? 0, completionTokens: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0) } : null;
    return { images, usage, upstreamId: r.responseId ?? null, text: texts.length > 0 ? texts.join('') : null };
  },
};
