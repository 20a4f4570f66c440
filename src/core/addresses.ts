/**
 * Which hosts the gateway must not call on a caller's (or a model's) say-so: loopback and private addresses. Used by
 * video webhooks (`callback_url`) and the `gateway:web_fetch` server tool. Pure.
 */
import { isIP } from 'node:net';

/** A loopback host: `localhost` (and `*.localhost`), 127.0.0.0/8, ::1. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1' || host === '0:0:0:0:0:0:0:1';
}

/**
 * A literal private, link-local, shared or unspecified address: 0/8, 10/8, 100.64/10, 169.254/16, 172.16/12,
 * 192.168/16; IPv6 unique-local, link-local, unspecified and IPv4-mapped. Host names are not resolved here.
 */
export function isPrivateAddress(host: string): boolean {
  if (isIP(host) === 4) {
    const [a, b] = host.split('.').map(Number);
    return a === 0 || a === 10 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
  }
  if (isIP(host) === 6) return /^(fc|fd|fe8|fe9|fea|feb)/i.test(host) || host === '::' || /^::ffff:/i.test(host);
  return false;
}

/** A URL's host without IPv6 brackets, lower-cased. */
export const hostOf = (u: URL): string => u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
