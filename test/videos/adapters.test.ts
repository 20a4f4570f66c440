/** The upstream adapters' wire mapping (pure parts): request bodies and job states of both protocols. */
import { describe, expect, it } from 'vitest';
import { openaiVideoBody, openaiVideoState } from '../../src/providers/openai-video/index.js';
import { veoBody, veoImage, veoOperationState } from '../../src/providers/google-veo/index.js';
import type { VideoSubmitRequest } from '../../src/providers/video-types.js';
import { fakeMp4 } from '../../src/sim/video.js';

const req = (over: Partial<VideoSubmitRequest> = {}): VideoSubmitRequest => ({
  prompt: 'a fox',
  duration: null,
  resolution: null,
  aspect_ratio: null,
  size: null,
  first_frame: null,
  last_frame: null,
  references: [],
  generate_audio: null,
  seed: null,
  options: {},
  ...over,
});

describe('openai-video', () => {
  it('builds the POST /videos body: seconds as a string, size, input_reference, passthrough options last', () => {
    expect(openaiVideoBody('sora-2', req())).toEqual({ model: 'sora-2', prompt: 'a fox' });
    expect(openaiVideoBody('sora-2', req({ duration: 8, size: '1280x720', first_frame: 'https://x/a.png', options: { quality: 'hd', model: 'evil' } }))).toEqual({
      model: 'sora-2',
      prompt: 'a fox',
      seconds: '8',
      size: '1280x720',
      input_reference: { image_url: 'https://x/a.png' },
      quality: 'hd',
    });
    expect(openaiVideoBody('m', req({ references: ['data:image/png;base64,AA'] })).input_reference).toEqual({ image_url: 'data:image/png;base64,AA' });
  });

  it('maps the video object to a job state', () => {
    expect(openaiVideoState({ id: 'v', status: 'queued', progress: 0 })).toEqual({ state: 'running', progress: 0 });
    expect(openaiVideoState({ id: 'v', status: 'in_progress', progress: 40 })).toEqual({ state: 'running', progress: 40 });
    expect(openaiVideoState({ id: 'v', status: 'completed', seconds: '8' })).toEqual({ state: 'completed', content: [{ kind: 'openai-video', video_id: 'v' }], seconds: 8 });
    expect(openaiVideoState({ id: 'v', status: 'failed', error: { code: 'x', message: 'moderation' } })).toEqual({ state: 'failed', message: 'moderation' });
    expect(openaiVideoState({ id: 'v', status: 'failed', error: null })).toEqual({ state: 'failed', message: 'The provider failed to generate the video' });
    expect(() => openaiVideoState({ nope: true })).toThrow(/invalid video object/);
  });
});

describe('google-veo', () => {
  it('builds the predictLongRunning body: instance images inline, parameters in camelCase', () => {
    expect(veoBody(req())).toEqual({ instances: [{ prompt: 'a fox' }] });
    expect(
      veoBody(req({ duration: 6, aspect_ratio: '9:16', resolution: '4K', seed: 3, generate_audio: false, first_frame: 'data:image/jpeg;base64,QUJD', last_frame: 'gs://b/last.png', references: ['data:image/png;base64,AA'], options: { negativePrompt: 'rain', durationSeconds: 99 } })),
    ).toEqual({
      instances: [
        {
          prompt: 'a fox',
          image: { bytesBase64Encoded: 'QUJD', mimeType: 'image/jpeg' },
          lastFrame: { gcsUri: 'gs://b/last.png' },
          referenceImages: [{ image: { bytesBase64Encoded: 'AA', mimeType: 'image/png' }, referenceType: 'asset' }],
        },
      ],
      parameters: { durationSeconds: 6, aspectRatio: '9:16', resolution: '4k', seed: 3, generateAudio: false, negativePrompt: 'rain' },
    });
    expect(veoImage('https://example.com/a.png')).toEqual({ gcsUri: 'https://example.com/a.png' });
  });

  it('maps the operation to a job state', () => {
    expect(veoOperationState({ name: 'operations/x' })).toEqual({ state: 'running', progress: null });
    expect(veoOperationState({ name: 'operations/x', done: false, metadata: { progressPercent: 30 } })).toEqual({ state: 'running', progress: 30 });
    expect(veoOperationState({ name: 'operations/x', done: true, error: { code: 3, message: 'blocked' } })).toEqual({ state: 'failed', message: 'blocked' });
    expect(
      veoOperationState({ done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'https://g/v1beta/files/a:download?alt=media' } }, { video: { uri: 'https://g/b' } }] } } }),
    ).toEqual({ state: 'completed', content: [{ kind: 'google-veo', uri: 'https://g/v1beta/files/a:download?alt=media' }, { kind: 'google-veo', uri: 'https://g/b' }], seconds: null });
    expect(veoOperationState({ done: true, response: { generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['unsafe'] } } })).toEqual({
      state: 'failed',
      message: 'The provider filtered the video: unsafe',
    });
    expect(veoOperationState({ done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'file:///etc/passwd' } }] } } }).state).toBe('failed');
  });
});

describe('simulator video bytes', () => {
  it('are a deterministic fake MP4 starting with an ftyp box, every byte ASCII', () => {
    const a = fakeMp4('seed', 4096);
    expect(a.equals(fakeMp4('seed', 4096))).toBe(true);
    expect(a.equals(fakeMp4('other', 4096))).toBe(false);
    expect(a.readUInt32BE(0)).toBe(32);
    expect(a.subarray(4, 12).toString()).toBe('ftypisom');
    expect(a.subarray(36, 40).toString()).toBe('mdat');
    expect(a.readUInt32BE(32)).toBe(a.length - 32);
    expect(a.every((b) => b < 0x80)).toBe(true);
  });
});
