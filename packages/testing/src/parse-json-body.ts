/** A request body as JSON; undefined when it is empty or not JSON (the fakes answer that with the API's own 400). */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
