/**
 * Builtin detectors that are pattern heuristics rather than formats: person-name (a name after an honorific or an
 * explicit "my name is" / "name:" cue — not named-entity recognition), address (a US-style street address: number,
 * street name, street suffix, optional unit, city, state and ZIP; or a PO box) and regex-prompt-injection (the
 * common instruction-override phrasings). Every regex uses bounded repetition only.
 */
import type { Span } from './types.js';

function all(re: RegExp, text: string, group = 0): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = group === 0 ? m.index : m.index + m[0].indexOf(m[group]);
    out.push({ start, end: start + m[group].length });
  }
  return out;
}

const CAP = "[A-Z][a-z'’-]{1,30}";
const NAME = `${CAP}(?: (?:[A-Z]\\. )?${CAP}){0,2}`;
const HONORIFIC = new RegExp(`\\b(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof|Sir|Dame|Madam)\\.? (${NAME})`, 'g');
const CUE = new RegExp(`\\b(?:[Mm]y name is |[Mm]y full name is |[Nn]ame: ?|[Ff]ull name: ?|[Ss]incerely,\\s{1,4}|[Rr]egards,\\s{1,4})(${CAP}(?: (?:[A-Z]\\. )?${CAP}){1,2})`, 'g');

export function findPersonNames(text: string): Span[] {
  return [...all(HONORIFIC, text, 1), ...all(CUE, text, 1)];
}

const SUFFIX =
  'Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Parkway|Pkwy|Circle|Cir|Highway|Hwy|Square|Sq|Trail|Trl';
const STATE = '(?:A[LKZR]|C[AOT]|D[EC]|FL|GA|HI|I[ADLN]|K[SY]|LA|M[ADEINOST]|N[CDEHJMVY]|O[HKR]|PA|RI|S[CD]|T[NX]|UT|V[AT]|W[AIVY])';
const STREET = `\\b\\d{1,6}(?: [NSEW]\\.?)? (?:[A-Z][a-z]{1,20} ){1,4}(?:${SUFFIX})\\b\\.?`;
const UNIT = `(?:,? (?:Apt|Suite|Ste|Unit|#) ?\\.? ?[A-Za-z0-9-]{1,8})?`;
const CITY = `(?:, (?:[A-Z][a-z]{1,20} ){0,2}[A-Z][a-z]{1,20},? ${STATE}(?: \\d{5}(?:-\\d{4})?)?)?`;
const ADDRESS = new RegExp(`${STREET}${UNIT}${CITY}`, 'g');
const PO_BOX = /\bP\.? ?O\.? Box \d{1,8}\b/gi;

export function findAddresses(text: string): Span[] {
  return [...all(ADDRESS, text), ...all(PO_BOX, text)];
}

const INJECTION = new RegExp(
  [
    String.raw`\b(?:ignore|disregard|forget|override|bypass)\s{1,3}(?:all\s{1,3}|any\s{1,3}|the\s{1,3}|your\s{1,3}|of\s{1,3}){0,3}(?:previous|prior|above|earlier|preceding|system|original)\s{1,3}(?:instructions?|prompts?|rules|directions|guidelines|messages?|context)\b`,
    String.raw`\byou\s{1,3}are\s{1,3}now\s{1,3}(?:DAN|in\s{1,3}developer\s{1,3}mode|jailbroken|unrestricted|free\s{1,3}of\s{1,3}(?:all\s{1,3})?restrictions)\b`,
    String.raw`\b(?:reveal|print|show|repeat|output|leak)\s{1,3}(?:me\s{1,3})?(?:your|the)\s{1,3}(?:system\s{1,3}prompt|hidden\s{1,3}instructions|initial\s{1,3}instructions)\b`,
    String.raw`\bdo\s{1,3}anything\s{1,3}now\b`,
    String.raw`\b(?:enable|enter|activate)\s{1,3}(?:developer|god|jailbreak)\s{1,3}mode\b`,
    String.raw`\bpretend\s{1,3}(?:that\s{1,3})?you\s{1,3}have\s{1,3}no\s{1,3}(?:rules|restrictions|guidelines|filters)\b`,
    String.raw`\bnew\s{1,3}instructions\s{0,3}:\s{0,3}ignore\b`,
  ].join('|'),
  'gi',
);

export function findPromptInjections(text: string): Span[] {
  return all(INJECTION, text);
}
