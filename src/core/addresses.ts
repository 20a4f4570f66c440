/**
 * Which hosts the gateway must not call on a caller's (or a model's) say-so: loopback and private addresses. Used by
 * video webhooks (`callback_url`) and the `gateway:web_fetch` server tool. Pure.
 */
import { BlockList, isIP } from 'node:net';
import { badRequest } from './errors.js';

/** A loopback host: `localhost` (and `*.localhost`), 127.0.0.0/8, ::1. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1' || host === '0:0:0:0:0:0:0:1';
}

/**
 * Address ranges that are not the public internet (IANA special-purpose registries), in two lists: a BlockList
 * checks IPv4 addresses against IPv6 rules too (as IPv4-compatible addresses), so `::/96` would catch every IPv4.
 */
const [NOT_PUBLIC_V4, NOT_PUBLIC_V6] = (() => {
  const four = new BlockList();
  const six = new BlockList();
  const v4: Array<[string, number]> = [
    ['0.0.0.0', 8], // "this network"
    ['10.0.0.0', 8],
    ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
    ['127.0.0.0', 8],
    ['169.254.0.0', 16], // link-local, cloud metadata
    ['172.16.0.0', 12],
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.168.0.0', 16],
    ['198.18.0.0', 15], // benchmarking
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, and the broadcast address
  ];
  const v6: Array<[string, number]> = [
    ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d)
    ['::ffff:0:0', 96], // IPv4-mapped
    ['64:ff9b::', 96], // NAT64: reaches IPv4 addresses, private ones included
    ['64:ff9b:1::', 48], // local-use NAT64
    ['100::', 64], // discard
    ['2002::', 16], // 6to4: embeds an IPv4 address
    ['fc00::', 7], // unique local
    ['fe80::', 10], // link-local
    ['ff00::', 8], // multicast
  ];
  for (const [net, prefix] of v4) four.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of v6) six.addSubnet(net, prefix, 'ipv6');
  return [four, six];
})();

/**
 * A literal address that is not on the public internet: private, shared, link-local, loopback, multicast, reserved,
 * and IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4). Host names are not resolved here.
 */
export function isPrivateAddress(host: string): boolean {
  const v = isIP(host);
  if (v === 4) return NOT_PUBLIC_V4.check(host, 'ipv4');
  return v === 6 && NOT_PUBLIC_V6.check(host, 'ipv6');
}

/**
 * A URL's host without IPv6 brackets, lower-cased, without the trailing dot of a fully-qualified name
 * (`localhost.` and `127.0.0.1.` resolve like `localhost` and `127.0.0.1`).
 */
export const hostOf = (u: URL): string => u.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();

/**
 * Checks a URL the gateway will call on a caller's say-so (video `callback_url`, broadcast destinations): https to a
 * public host; a loopback host (http or https) only when `allowLoopback`; no credentials in it. 400 naming `field`.
 */
export function checkOutboundUrl(raw: string, allowLoopback: boolean, field: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest(`${field} must be an absolute URL`, { field });
  }
  if (u.username || u.password) throw badRequest(`${field} must not carry credentials`, { field });
  const host = hostOf(u);
  if (isLoopback(host)) {
    if (!allowLoopback) throw badRequest(`${field} must not point at a loopback address`, { field });
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw badRequest(`${field} must be an http(s) URL`, { field });
    return u.toString();
  }
  if (u.protocol !== 'https:') throw badRequest(`${field} must use https`, { field });
  if (isPrivateAddress(host)) throw badRequest(`${field} must not point at a private address`, { field });
  return u.toString();
}
