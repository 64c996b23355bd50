import net from 'node:net';

/**
 * Why an address may not receive callbacks. `public` is the only class delivered to by default;
 * CALLBACK_ALLOW_PRIVATE additionally permits the LOCAL_CLASSES (local development and tests).
 */
export type AddressClass =
  | 'public' | 'loopback' | 'private' | 'cgnat' | 'unique-local' | 'link-local' | 'multicast' | 'unspecified'
  | 'reserved' | 'invalid';

export const LOCAL_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'cgnat', 'unique-local']);

type Range4 = [string, number, AddressClass];
const V4: Range4[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'cgnat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // includes the 169.254.169.254 cloud metadata service
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // includes 255.255.255.255
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

export function classifyIPv4(ip: string): AddressClass {
  if (!net.isIPv4(ip)) return 'invalid';
  const n = v4ToInt(ip);
  for (const [base, bits, cls] of V4) {
    const size = 2 ** (32 - bits);
    const start = v4ToInt(base);
    if (n >= start && n < start + size) return cls;
  }
  return 'public';
}

/** 16 bytes of an IPv6 text form (with optional zone and embedded dotted quad). */
export function ipv6Bytes(text: string): number[] | undefined {
  const ip = text.replace(/^\[|\]$/g, '').split('%')[0];
  if (!net.isIPv6(ip)) return undefined;
  let s = ip;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (quad) {
    const n = v4ToInt(quad[1]);
    s = `${s.slice(0, quad.index)}${((n >>> 16) & 0xffff).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return undefined;
  return groups.flatMap((g) => {
    const v = parseInt(g, 16);
    return [(v >> 8) & 0xff, v & 0xff];
  });
}

export function classifyIPv6(text: string): AddressClass {
  const b = ipv6Bytes(text);
  if (!b) return 'invalid';
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = () => b.slice(12, 16).join('.');
  if (zeros(0, 16)) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judged as the IPv4 address they carry.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyIPv4(v4());
  if (zeros(0, 12)) return classifyIPv4(v4());
  // NAT64 64:ff9b::/96 also embeds an IPv4 address.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return classifyIPv4(v4());
  if (b[0] === 0xff) return 'multicast';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return 'link-local';
  if ((b[0] & 0xfe) === 0xfc) return 'unique-local';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return 'reserved'; // deprecated site-local
  // 6to4 carries an IPv4 address in bytes 2..5.
  if (b[0] === 0x20 && b[1] === 0x02) {
    const inner = classifyIPv4(b.slice(2, 6).join('.'));
    return inner === 'public' ? 'public' : inner;
  }
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'reserved'; // documentation
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return 'reserved'; // Teredo
  // Global unicast is 2000::/3; everything else is unassigned or special.
  if ((b[0] & 0xe0) !== 0x20) return 'reserved';
  return 'public';
}

export function classifyAddress(ip: string): AddressClass {
  if (net.isIPv4(ip)) return classifyIPv4(ip);
  return classifyIPv6(ip);
}

export function isAllowedAddress(cls: AddressClass, allowPrivate: boolean): boolean {
  return cls === 'public' || (allowPrivate && LOCAL_CLASSES.has(cls));
}
