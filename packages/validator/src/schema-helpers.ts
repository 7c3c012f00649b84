import * as v from 'valibot';

/** A string from a fixed list; any other string is a value issue (`invalid_parameter`), not a type issue. */
export function oneOf<const T extends string>(values: readonly T[]) {
  return v.pipe(
    v.string(),
    v.check((value): boolean => (values as readonly string[]).includes(value), `must be one of ${values.join(', ')}`),
  ) as unknown as v.GenericSchema<unknown, T>;
}

/** A string whose value is refused whatever it is (an unknown role or kind), naming the values taken. */
export function refusedString(values: readonly string[]) {
  return v.pipe(
    v.string(),
    v.check(() => false, `must be one of ${values.join(', ')}`),
  );
}

/** Whether a value is a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON object kept as sent (e.g. a JSON Schema). */
export const jsonObject = v.custom<Record<string, unknown>>(isJsonObject, 'must be a JSON object');

/** An integer from `min` to `max`; the message names the rule. */
export function integerBetween(min: number, max: number) {
  const rule = `must be an integer from ${min} to ${max}`;
  return v.pipe(v.number(), v.integer(rule), v.minValue(min, rule), v.maxValue(max, rule));
}
