const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * Plain text of a short HTML fragment (Brave's snippets carry `<strong>` highlights and entities):
 * tags removed, the common and numeric entities decoded, whitespace collapsed.
 *
 * @example
 * stripHtml('Use <strong>Tollgate</strong> &amp; more'); // 'Use Tollgate & more'
 */
export function stripHtml(fragment: string): string {
  return fragment
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
      }
      return ENTITIES[name.toLowerCase()] ?? entity;
    })
    .replace(/\s+/g, ' ')
    .trim();
}
