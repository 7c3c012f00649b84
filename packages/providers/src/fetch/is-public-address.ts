import { parseHostAddress, parseIPv4, parseIPv6 } from './parse-host-address';

/** IPv4 ranges a page fetch must never reach: [first address, prefix length]. */
const BLOCKED_IPV4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on many systems
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (and Alibaba's 100.100.100.200 metadata)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, incl. 169.254.169.254 cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (Oracle's 192.0.0.192 metadata)
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. 255.255.255.255 broadcast
  ['168.63.129.16', 32], // Azure's platform endpoint (wire server, metadata DNS)
];

const BLOCKED_IPV4_MASKS = BLOCKED_IPV4.map(([first, prefix]) => {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { network: ((parseIPv4(first) as number) & mask) >>> 0, mask };
});

/**
 * Whether an IP literal (any spelling {@link parseHostAddress} takes) is a public unicast address a
 * page fetch may connect to. False for names, for every private, loopback, link-local, CGNAT,
 * multicast, reserved, documentation and metadata range, and for IPv6 forms that embed one.
 *
 * @example
 * isPublicAddress('93.184.215.14');      // true
 * isPublicAddress('::ffff:10.0.0.1');    // false
 */
export function isPublicAddress(address: string): boolean {
  const canonical = parseHostAddress(address);
  if (canonical === undefined) return false;
  if (!canonical.includes(':')) return isPublicIPv4(parseIPv4(canonical) as number);
  return isPublicIPv6(parseIPv6(canonical) as number[]);
}

function isPublicIPv4(value: number): boolean {
  return BLOCKED_IPV4_MASKS.every(({ network, mask }) => (value & mask) >>> 0 !== network);
}

function embeddedIPv4(high: number, low: number): number {
  return ((high << 16) | low) >>> 0;
}

function isPublicIPv6(words: number[]): boolean {
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words as [number, number, number, number, number, number, number, number];
  const zeroPrefix = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0;
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, incl. :: and ::1) are judged by their IPv4 address.
  if (zeroPrefix && (w5 === 0xffff || w5 === 0)) return isPublicIPv4(embeddedIPv4(w6, w7));
  // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) {
    return isPublicIPv4(embeddedIPv4(w6, w7));
  }
  // 6to4 2002:V4ADDR::/48 tunnels to the embedded IPv4 address.
  if (w0 === 0x2002) return isPublicIPv4(embeddedIPv4(w1, w2));
  // Only global unicast 2000::/3 is public; that excludes ::/8 leftovers, 64:ff9b:1::/48,
  // 100::/64 discard, fc00::/7 unique-local (incl. fd00:ec2::254 metadata), fe80::/10, fec0::/10, ff00::/8.
  if ((w0 & 0xe000) !== 0x2000) return false;
  if (w0 === 0x2001 && w1 === 0) return false; // Teredo 2001::/32 hides an IPv4 address
  if (w0 === 0x2001 && w1 === 0xdb8) return false; // documentation 2001:db8::/32
  if (w0 === 0x2001 && w1 === 0x2 && w2 === 0) return false; // benchmarking 2001:2::/48
  if (w0 === 0x2001 && (w1 & 0xfff0) === 0x10) return false; // ORCHID 2001:10::/28
  if (w0 === 0x2001 && (w1 & 0xfff0) === 0x20) return false; // ORCHIDv2 2001:20::/28
  if (w0 === 0x3fff && (w1 & 0xf000) === 0) return false; // documentation 3fff::/20
  return true;
}
