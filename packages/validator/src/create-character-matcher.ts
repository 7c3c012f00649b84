/**
 * A test of whether a text opens with one of the app's character prompts, in O(log n) string
 * comparisons however many prompts share an opening ("You are ..."). Leading whitespace is ignored
 * on both sides (a space in front must not hide a character); empty prompts are ignored.
 *
 * How: the prompts are sorted and every prompt that extends another is dropped (the shorter one
 * already matches). In such a prefix-free sorted list, if some prompt opens the text it is the
 * largest prompt that sorts at or before the text, so one binary search finds the only candidate.
 *
 * @example
 * const isCharacter = createCharacterMatcher(['You are Aria, a cheerful guide.']);
 * isCharacter('You are Aria, a cheerful guide. Be brief.'); // true
 */
export function createCharacterMatcher(prompts: string[]): (text: string) => boolean {
  const sorted = [...new Set(prompts.map((prompt) => prompt.trimStart()).filter((prompt) => prompt !== ''))].sort();
  const kept: string[] = [];
  for (const prompt of sorted) {
    const last = kept[kept.length - 1];
    if (last === undefined || !prompt.startsWith(last)) kept.push(prompt);
  }
  return (raw: string): boolean => {
    const text = raw.trimStart();
    let low = 0;
    let high = kept.length - 1;
    let candidate = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if ((kept[middle] as string) <= text) {
        candidate = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    return candidate !== -1 && text.startsWith(kept[candidate] as string);
  };
}
