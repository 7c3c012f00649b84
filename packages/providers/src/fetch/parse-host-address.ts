/**
 * The canonical form of an IP literal host: a dotted quad for IPv4 (whatever its spelling:
 * `2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`), a lower-case RFC 5952 form for IPv6 (brackets
 * and zone id dropped; IPv4-mapped as `::ffff:a.b.c.d`). `undefined` when the host is a name.
 *
 * @example
 * parseHostAddress('0x7f.1');             // '127.0.0.1'
 * parseHostAddress('[::FFFF:7f00:1]');    // '::ffff:127.0.0.1'
 * parseHostAddress('example.com');        // undefined
 */
export function parseHostAddress(hostname: string): string | undefined {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host.includes(':')) {
    const words = parseIPv6(host);
    return words === undefined ? undefined : formatIPv6(words);
  }
  const value = parseIPv4(host);
  return value === undefined ? undefined : formatIPv4(value);
}

/** The 32-bit value of an IPv4 literal in any spelling the WHATWG URL parser takes, or undefined. */
export function parseIPv4(input: string): number | undefined {
  // One trailing dot is allowed, as in URLs (`127.0.0.1.`).
  const parts = input.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const number = parseIPv4Number(part);
    if (number === undefined) return undefined;
    numbers.push(number);
  }
  const last = numbers.pop() as number;
  // The last part fills every byte the earlier parts left: `127.1` is 127.0.0.1.
  if (last >= 256 ** (4 - numbers.length)) return undefined;
  let value = last;
  numbers.forEach((number, index) => {
    if (number > 255) value = Number.NaN;
    value += number * 256 ** (3 - index);
  });
  return Number.isNaN(value) ? undefined : value;
}

function parseIPv4Number(part: string): number | undefined {
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(digits)) {
    digits = digits.slice(2);
    radix = 16;
    if (digits === '') return 0;
  } else if (digits.length > 1 && digits.startsWith('0')) {
    digits = digits.slice(1);
    radix = 8;
  }
  const pattern = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!pattern.test(digits)) return undefined;
  const value = Number.parseInt(digits, radix);
  // Anything past 2^32 is not an address; keep it out before precision is lost.
  return value <= 0xffffffff ? value : undefined;
}

/** The eight 16-bit words of an IPv6 literal (zone id ignored), or undefined. */
export function parseIPv6(input: string): number[] | undefined {
  const zone = input.indexOf('%');
  const text = (zone >= 0 ? input.slice(0, zone) : input).toLowerCase();
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : (halves[0] as string).split(':');
  const tail = halves.length === 2 ? (halves[1] === '' ? [] : (halves[1] as string).split(':')) : [];
  const words: number[] = [];
  const read = (groups: string[], allowV4Last: boolean): number[] | undefined => {
    const out: number[] = [];
    for (const [index, group] of groups.entries()) {
      if (allowV4Last && index === groups.length - 1 && group.includes('.')) {
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(group)) return undefined;
        const bytes = group.split('.').map(Number);
        if (bytes.some((byte) => byte > 255)) return undefined;
        out.push(((bytes[0] as number) << 8) | (bytes[1] as number), ((bytes[2] as number) << 8) | (bytes[3] as number));
      } else {
        if (!/^[0-9a-f]{1,4}$/.test(group)) return undefined;
        out.push(Number.parseInt(group, 16));
      }
    }
    return out;
  };
  const headWords = read(head, halves.length === 1);
  const tailWords = read(tail, true);
  if (headWords === undefined || tailWords === undefined) return undefined;
  if (halves.length === 1) {
    if (headWords.length !== 8) return undefined;
    return headWords;
  }
  const missing = 8 - headWords.length - tailWords.length;
  if (missing < 1) return undefined;
  words.push(...headWords, ...new Array<number>(missing).fill(0), ...tailWords);
  return words;
}

/** A dotted quad from a 32-bit value. */
export function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

function formatIPv6(words: number[]): string {
  // IPv4-mapped addresses read best (and are checked) as their IPv4 address.
  if (words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff) {
    return `::ffff:${formatIPv4((((words[6] as number) << 16) | (words[7] as number)) >>> 0)}`;
  }
  // RFC 5952: the longest run (of two or more) of zero words becomes `::`, the first one on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; ) {
    if (words[start] !== 0) {
      start += 1;
      continue;
    }
    let end = start;
    while (end < 8 && words[end] === 0) end += 1;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = words.map((word) => word.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
