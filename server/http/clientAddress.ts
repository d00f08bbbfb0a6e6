/**
 * A requester's address as a study's admission limits and pairing see it: a keyed hash, never the
 * address itself (an address is personal data, and an unkeyed hash of an IPv4 address is undone
 * by trying them all). An IPv6 address counts by its /64, one subscriber's usual allocation, so
 * that one network's many addresses count as one. Behind a reverse proxy the address is the one
 * the proxy passes on (X-Forwarded-For), trusted only from the proxies `trust proxy` names.
 */
import { createHmac } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Express's `trust proxy` by default: proxies on this machine and on private networks (nginx
 * beside the server, a container network) may say whom they forward. A client on the internet
 * reaches the server only through them, so it cannot choose its own address.
 */
export const DEFAULT_TRUST_PROXY = 'loopback, linklocal, uniquelocal';

/** The part of an address that identifies a network: an IPv4 address, an IPv6 /64; null for anything else. */
export function addressNetwork(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return null;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((group) => group.padStart(4, '0')).join(':')}::/64`;
}

/** The keyed hash of an address's network (16 hex digits), or undefined when the address is unknown. */
export function addressTag(address: string | undefined, key: string): string | undefined {
  const network = address === undefined ? null : addressNetwork(address);
  return network === null ? undefined : createHmac('sha256', key).update(network).digest('hex').slice(0, 16);
}
