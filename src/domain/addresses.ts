/**
 * IP addresses as the fetch-hop rule needs them: parsed from text, printed in the one form URLs use
 * (dotted IPv4; IPv6 compressed as WHATWG and RFC 5952 print it, no embedded IPv4), and classified.
 * Pure: no resolver, no sockets.
 */
export type IpAddress = { readonly family: 4; readonly bytes: readonly number[] } | { readonly family: 6; readonly groups: readonly number[] };

/** What the address reaches. Everything but `public` is refused unless a scope names it literally. */
export type AddressClass = 'public' | 'unspecified' | 'loopback' | 'private' | 'link_local' | 'reserved';

const dottedByte = /^(0|[1-9][0-9]{0,2})$/;

export function parseIpv4(text: string): readonly number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!dottedByte.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes.push(value);
  }
  return bytes;
}

// The longest IPv6 text: six full groups and a dotted quad (`ffff:…:ffff:255.255.255.255`).
const ipv6TextMax = 45;

function parseIpv6(text: string): readonly number[] | undefined {
  // Hostile text: bound it before splitting (nothing longer can parse).
  if (text.length > ipv6TextMax) return undefined;
  let head = text;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const v4 = parseIpv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number)];
    head = text.slice(0, lastColon + 1);
    // `head` ends at the colon before the quad: drop it unless it is the second of a `::`.
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const group = (piece: string): number | undefined => (/^[0-9a-fA-F]{1,4}$/.test(piece) ? parseInt(piece, 16) : undefined);
  const parse = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    for (const piece of half.split(':')) {
      const value = group(piece);
      if (value === undefined) return undefined;
      out.push(value);
    }
    return out;
  };
  const left = parse(halves[0] as string);
  if (left === undefined) return undefined;
  if (halves.length === 1) {
    const groups = [...left, ...tail];
    return groups.length === 8 ? groups : undefined;
  }
  const right = parse(halves[1] as string);
  if (right === undefined) return undefined;
  const missing = 8 - left.length - right.length - tail.length;
  if (missing < 1) return undefined;
  return [...left, ...new Array<number>(missing).fill(0), ...right, ...tail];
}

/** Parses an IPv4 dotted quad or an IPv6 address (without brackets or zone); undefined otherwise. */
export function parseIp(text: string): IpAddress | undefined {
  const v4 = parseIpv4(text);
  if (v4 !== undefined) return { family: 4, bytes: v4 };
  const v6 = parseIpv6(text);
  return v6 === undefined ? undefined : { family: 6, groups: v6 };
}

/** The host text a URL carries for the address: `127.0.0.1`, `[::1]`. */
export function ipHostText(address: IpAddress): string {
  if (address.family === 4) return address.bytes.join('.');
  const groups = address.groups;
  // Compress the first longest run of two or more zero groups.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (slice: readonly number[]): string => slice.map((g) => g.toString(16)).join(':');
  const text = bestStart < 0 ? hex(groups) : `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
  return `[${text}]`;
}

type Range4 = readonly [number, number, number, number, number, AddressClass];
// [a, b, c, d, prefix length, class]: IANA special-purpose IPv4 registry, everything not globally reachable.
const ranges4: readonly Range4[] = [
  [0, 0, 0, 0, 32, 'unspecified'],
  [0, 0, 0, 0, 8, 'reserved'],
  [10, 0, 0, 0, 8, 'private'],
  [100, 64, 0, 0, 10, 'private'],
  [127, 0, 0, 0, 8, 'loopback'],
  [169, 254, 0, 0, 16, 'link_local'],
  [172, 16, 0, 0, 12, 'private'],
  [192, 0, 0, 0, 24, 'reserved'],
  [192, 0, 2, 0, 24, 'reserved'],
  [192, 88, 99, 0, 24, 'reserved'],
  [192, 168, 0, 0, 16, 'private'],
  [198, 18, 0, 0, 15, 'reserved'],
  [198, 51, 100, 0, 24, 'reserved'],
  [203, 0, 113, 0, 24, 'reserved'],
  [224, 0, 0, 0, 4, 'reserved'],
  [240, 0, 0, 0, 4, 'reserved'],
];

function classify4(bytes: readonly number[]): AddressClass {
  const value = (((bytes[0] as number) << 24) | ((bytes[1] as number) << 16) | ((bytes[2] as number) << 8) | (bytes[3] as number)) >>> 0;
  for (const [a, b, c, d, prefix, kind] of ranges4) {
    const base = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
    // Every prefix in the table is 4..32 (a /0 would need its own case: JS shifts count mod 32).
    const mask = (0xffffffff << (32 - prefix)) >>> 0;
    if (((value & mask) >>> 0) === base) return kind;
  }
  return 'public';
}

const embeddedV4 = (groups: readonly number[]): number[] => [
  (groups[6] as number) >> 8,
  (groups[6] as number) & 0xff,
  (groups[7] as number) >> 8,
  (groups[7] as number) & 0xff,
];

function classify6(groups: readonly number[]): AddressClass {
  const [g0, g1, g2, g3, g4, g5, , g7] = groups as [number, number, number, number, number, number, number, number];
  const zeroUpTo = (n: number): boolean => groups.slice(0, n).every((g) => g === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g7 === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d): what it reaches is the IPv4 address.
  if (zeroUpTo(5) && g5 === 0xffff) return classify4(embeddedV4(groups));
  // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291) and the rest of ::/96: refused whatever it embeds.
  if (zeroUpTo(6)) return 'reserved';
  // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address; the local-use NAT64 prefix stays inside.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classify4(embeddedV4(groups));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'reserved';
  // 6to4 (2002::/16) carries an IPv4 address in groups 1-2.
  if (g0 === 0x2002) return classify4([g1 >> 8, g1 & 0xff, g2 >> 8, g2 & 0xff]);
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // discard-only
  if (g0 === 0x2001 && g1 === 0) return 'reserved'; // Teredo tunnels to arbitrary IPv4 hosts
  if (g0 === 0x2001 && g1 === 0xdb8) return 'reserved'; // documentation
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'link_local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'reserved'; // multicast
  return 'public';
}

export function addressClass(address: IpAddress): AddressClass {
  return address.family === 4 ? classify4(address.bytes) : classify6(address.groups);
}
