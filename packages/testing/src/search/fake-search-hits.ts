/** One result of the fakes' search index. */
export interface FakeSearchHit {
  title: string;
  url: string;
  /** The snippet, plain text. */
  content: string;
  /** `YYYY-MM-DDTHH:MM:SS` (no zone, as SearXNG and Brave send it), or null for undated pages. */
  publishedDate: string | null;
}

/** FNV-1a: a stable number from a string, so every query has its own, repeatable results. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (const char of text) value = Math.imul(value ^ (char.codePointAt(0) as number), 0x01000193) >>> 0;
  return value;
}

function slug(query: string): string {
  const words = query
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return words === '' ? 'q' : words.slice(0, 40);
}

/**
 * The fake index's results for a query: deterministic (the same query always gives the same
 * results), result `position` counted from 1; every other result is undated.
 *
 * @example
 * fakeSearchHits('tollgate', 0, 3).map((hit) => hit.url);
 * // ['https://tollgate-1.example.com/tollgate/1', …]
 */
export function fakeSearchHits(query: string, offset: number, count: number): FakeSearchHit[] {
  const seed = hash(query);
  const name = slug(query);
  return Array.from({ length: count }, (_, index) => {
    const position = offset + index + 1;
    const day = ((seed + position * 7) % 28) + 1;
    const month = (((seed >>> 8) + position) % 12) + 1;
    const hour = (seed + position) % 24;
    return {
      title: `${query} - result ${position}`,
      url: `https://${name}-${((seed + position) % 9) + 1}.example.com/${name}/${position}`,
      content: `Result ${position} of the fake index for ${query}: a page that talks about ${query}.`,
      publishedDate:
        position % 2 === 1 ? `2024-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00` : null,
    };
  });
}
