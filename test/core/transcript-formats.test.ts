/** The text, SubRip and WebVTT answers of POST /audio/transcriptions, from a verbose_json answer. */
import { describe, expect, it } from 'vitest';
import { cuesOf, isTextTranscriptFormat, renderTranscript, toSrt, toVtt } from '../../src/core/transcript-formats.js';

describe('transcript formats', () => {
  const answer = {
    text: 'Hello there. General Kenobi.',
    duration: 3725.5,
    segments: [
      { id: 0, start: 0, end: 1.2344, text: ' Hello there.' },
      { id: 1, start: 3723.0005, end: 3725.5, text: ' General Kenobi. ' },
    ],
  };

  it('SubRip: numbered cues, comma milliseconds, hours past 59 minutes, a blank line after each cue', () => {
    expect(renderTranscript('srt', answer)).toBe('1\n00:00:00,000 --> 00:00:01,234\nHello there.\n\n2\n01:02:03,001 --> 01:02:05,500\nGeneral Kenobi.\n\n');
  });

  it('WebVTT: the header, dot milliseconds, no cue numbers', () => {
    expect(renderTranscript('vtt', answer)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.234\nHello there.\n\n01:02:03.001 --> 01:02:05.500\nGeneral Kenobi.\n\n');
  });

  it('text: the transcript and a newline', () => {
    expect(renderTranscript('text', answer)).toBe('Hello there. General Kenobi.\n');
    expect(renderTranscript('text', {})).toBe('\n');
  });

  it('without segments, the whole text is one cue over the duration (0 when unknown); malformed or empty segments are skipped', () => {
    expect(cuesOf({ text: ' Hi. ', duration: 2 })).toEqual([{ start: 0, end: 2, text: 'Hi.' }]);
    expect(toSrt(cuesOf({ text: 'Hi.' }))).toBe('1\n00:00:00,000 --> 00:00:00,000\nHi.\n\n');
    expect(cuesOf({ text: 'Hi.', segments: [{ start: '0', end: 1, text: 'x' }, { start: 0, end: 1, text: '  ' }, null] })).toEqual([{ start: 0, end: 0, text: 'Hi.' }]);
    expect(cuesOf({ segments: [{ start: 2, end: 1, text: 'backwards' }] })).toEqual([{ start: 2, end: 2, text: 'backwards' }]);
    expect(toVtt([])).toBe('WEBVTT\n\n');
  });

  it('knows its formats', () => {
    expect(['text', 'srt', 'vtt'].every(isTextTranscriptFormat)).toBe(true);
    expect(isTextTranscriptFormat('json')).toBe(false);
    expect(isTextTranscriptFormat('toString')).toBe(false);
  });
});
