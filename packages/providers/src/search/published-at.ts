const ISO_LOCAL = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?$/;
const ISO_ZONED = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * An upstream's publication date as ISO 8601 UTC (`2024-05-01T12:00:00Z`), or undefined when it
 * is absent or not a date (Brave's `age` like "2 days ago" is not used). A date without a zone is
 * read as UTC: engines report them so, and a server's own zone must not shift them.
 *
 * @example
 * toPublishedAt('2024-05-01T12:00:00');       // '2024-05-01T12:00:00Z'
 * toPublishedAt('2024-05-01T14:00:00+02:00'); // '2024-05-01T12:00:00Z'
 */
export function toPublishedAt(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  let iso: string;
  const local = ISO_LOCAL.exec(text);
  const zoned = ISO_ZONED.exec(text);
  if (local) {
    iso = `${local[1]}T${local[2] ?? '00:00'}Z`;
  } else if (zoned) {
    const zone = (zoned[3] as string).toUpperCase();
    iso = `${zoned[1]}T${zoned[2]}${zone === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2}):?(\d{2})$/, '$1:$2')}`;
  } else {
    return undefined;
  }
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return undefined;
  return new Date(time).toISOString().replace('.000Z', 'Z');
}
