/** Which literal addresses the gateway refuses to call on a caller's or a model's say-so (web fetch, webhooks). */
import { describe, expect, it } from 'vitest';
import { isLoopback, isPrivateAddress } from '../../src/core/addresses.js';

describe('addresses', () => {
  it('private, shared, link-local, loopback, multicast and reserved IPv4 ranges', () => {
    for (const a of ['0.0.0.0', '10.1.2.3', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.168.1.1', '198.18.0.1', '198.19.255.255', '224.0.0.1', '240.0.0.1', '255.255.255.255']) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '198.20.0.1', '192.0.2.1']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('IPv6: loopback, unspecified, unique-local, link-local, multicast, and every form that embeds an IPv4 address', () => {
    for (const a of ['::', '::1', '::7f00:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:5', '64:ff9b:1::1', '2002:7f00:1::', 'fd00::1', 'fc00::1', 'fe80::1', 'ff02::1']) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['2606:4700::1111', '2001:4860:4860::8888']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('host names are not judged here (the connection’s DNS lookup is); loopback names are', () => {
    expect(isPrivateAddress('example.com')).toBe(false);
    expect(isLoopback('localhost')).toBe(true);
    expect(isLoopback('api.localhost')).toBe(true);
    expect(isLoopback('127.9.9.9')).toBe(true);
  });
});
