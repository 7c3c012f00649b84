/**
 * The part of a key Redis Cluster hashes: the text inside the first `{…}` when it is not empty,
 * else the whole key.
 */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** Indexes of `keys` grouped by hash tag, groups in the order of their first key. */
export function groupByHashTag(keys: string[]): number[][] {
  const groups = new Map<string, number[]>();
  keys.forEach((key, index) => {
    const tag = hashTag(key);
    const group = groups.get(tag);
    if (group) group.push(index);
    else groups.set(tag, [index]);
  });
  return [...groups.values()];
}
