/**
 * Builtin PII detectors: email, phone, ssn, credit-card (with the Luhn check), ip-address (v4 and v6). Each returns
 * the spans it matched. Every regex here is written to run in linear time per match attempt (bounded repetition,
 * separator-delimited groups); validation that regexes cannot express (Luhn, card prefixes, IPv6 grammar, SSN
 * reserved ranges) is done in code. Heuristics, tuned against ordinary prose, code, dates and version strings.
 */
import { isIPv6 } from 'node:net';
import type { Span } from './types.js';

function spans(re: RegExp, text: string, accept: (m: RegExpExecArray) => Span | null = (m) => ({ start: m.index, end: m.index + m[0].length })): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const s = accept(m);
    if (s) out.push(s);
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}

const LOCAL = /[A-Za-z0-9._%+-]/;
const DOMAIN = /[A-Za-z0-9.-]/;

/** Email addresses: found from each '@' outwards (linear), local part ≤ 64, domain with a 2+ letter top-level label. */
export function findEmails(text: string): Span[] {
  const out: Span[] = [];
  let lastEnd = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let s = at;
    while (s > lastEnd && at - s < 64 && LOCAL.test(text[s - 1])) s--;
    while (s < at && text[s] === '.') s++;
    let e = at + 1;
    while (e < text.length && e - at <= 253 && DOMAIN.test(text[e])) e++;
    while (e > at + 1 && (text[e - 1] === '.' || text[e - 1] === '-')) e--;
    if (s === at || e === at + 1) continue;
    const labels = text.slice(at + 1, e).split('.');
    if (labels.length < 2 || labels.some((l) => l === '' || l.startsWith('-'))) continue;
    if (!/^[A-Za-z]{2,24}$/.test(labels[labels.length - 1])) continue;
    out.push({ start: s, end: e });
    lastEnd = e;
  }
  return out;
}

// North American numbers with separators (555-123-4567, (555) 123-4567, +1 555.123.4567) and international numbers
// written with a leading + and separated groups (+44 20 7946 0958). Not preceded or followed by a digit or word.
const PHONE_NA = /(?<![\w+.-])(?:\+?1[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w]|[.-]\d)/g;
const PHONE_INTL = /(?<![\w+])\+\d{1,3}(?:[ .-]\(?\d{1,4}\)?){2,5}(?![\w]|[.-]\d)/g;

export function findPhones(text: string): Span[] {
  const na = spans(PHONE_NA, text);
  const intl = spans(PHONE_INTL, text, (m) => {
    const digits = m[0].replace(/\D/g, '').length;
    return digits >= 8 && digits <= 15 ? { start: m.index, end: m.index + m[0].length } : null;
  });
  return [...na, ...intl];
}

// US social security numbers: AAA-GG-SSSS, area not 000, 666 or 9xx, group not 00, serial not 0000.
const SSN = /(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w]|-\d)/g;

export function findSsns(text: string): Span[] {
  return spans(SSN, text, (m) => {
    const [, a, g, s] = m;
    if (a === '000' || a === '666' || a[0] === '9' || g === '00' || s === '0000') return null;
    return { start: m.index, end: m.index + m[0].length };
  });
}

/** Luhn checksum of a digit string. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes and lengths of the major card networks (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay). */
function knownCard(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === '4') return n === 13 || n === 16 || n === 19;
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16;
  if (p2 === 34 || p2 === 37) return n === 15;
  if (d.startsWith('6011') || p2 === 65 || (Number(d.slice(0, 3)) >= 644 && Number(d.slice(0, 3)) <= 649)) return n >= 16 && n <= 19;
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19;
  if (p2 === 36 || p2 === 38 || p2 === 30) return n >= 14 && n <= 19;
  if (p2 === 62) return n >= 16 && n <= 19;
  return false;
}

// 13–19 digits, optionally in groups separated by single spaces or hyphens.
const CARD = /(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w]|[.-]\d)/g;

export function findCreditCards(text: string): Span[] {
  return spans(CARD, text, (m) => {
    const d = m[0].replace(/\D/g, '');
    return knownCard(d) && luhn(d) ? { start: m.index, end: m.index + m[0].length } : null;
  });
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
// Not part of a longer dotted run (version strings such as 1.2.3.4.5) nor prefixed by a letter (v1.2.3.4).
const IPV4 = new RegExp(`(?<![\\w.])${OCTET}(?:\\.${OCTET}){3}(?![\\w]|\\.\\d)`, 'g');
// IPv6 candidates: hex groups and colons (optionally a dotted v4 tail), validated by node's parser.
const IPV6 = /(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?::\d{1,3}(?:\.\d{1,3}){3})?(?![\w:]|\.\d)/g;

export function findIpAddresses(text: string): Span[] {
  const v4 = spans(IPV4, text);
  const v6 = spans(IPV6, text, (m) => {
    const s = m[0];
    // A digit is required (rules out `a::b`-style code), and `::` or all eight groups (rules out times like 12:30:45).
    if (!/\d/.test(s) || !isIPv6(s) || !(s.includes('::') || s.split(':').length === 8)) return null;
    return { start: m.index, end: m.index + s.length };
  });
  return [...v4, ...v6];
}
