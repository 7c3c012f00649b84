/** Prompts are bucketed by this many leading characters, so a lookup costs a few map reads. */
const BUCKET_CHARS = 16;

/**
 * A test of whether a text opens with one of the app's character prompts. Leading whitespace is
 * ignored on both sides (a space in front must not hide a character); empty prompts are ignored.
 * Prompts of 16+ characters are bucketed by their first 16; shorter ones are looked up by length.
 *
 * @example
 * const isCharacter = createCharacterMatcher(['You are Aria, a cheerful guide.']);
 * isCharacter('You are Aria, a cheerful guide. Be brief.'); // true
 */
export function createCharacterMatcher(prompts: string[]): (text: string) => boolean {
  const buckets = new Map<string, string[]>();
  const short = new Map<number, Set<string>>();
  for (const raw of prompts) {
    const prompt = raw.trimStart();
    if (prompt === '') continue;
    if (prompt.length >= BUCKET_CHARS) {
      const head = prompt.slice(0, BUCKET_CHARS);
      const bucket = buckets.get(head);
      if (bucket === undefined) buckets.set(head, [prompt]);
      else bucket.push(prompt);
    } else {
      let set = short.get(prompt.length);
      if (set === undefined) short.set(prompt.length, (set = new Set()));
      set.add(prompt);
    }
  }
  const shortLengths = [...short.keys()];
  return (raw: string): boolean => {
    const text = raw.trimStart();
    for (const length of shortLengths) {
      if (text.length >= length && short.get(length)?.has(text.slice(0, length))) return true;
    }
    if (text.length < BUCKET_CHARS) return false;
    const bucket = buckets.get(text.slice(0, BUCKET_CHARS));
    return bucket !== undefined && bucket.some((prompt) => text.startsWith(prompt));
  };
}
