/**
 * Tool-call arguments (OpenAI sends a JSON string) as the object Anthropic and Gemini want;
 * undefined when they are not a JSON object. Empty means `{}`.
 * @example
 * parseToolArguments('{"city":"Paris"}'); // { city: 'Paris' }
 */
export function parseToolArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
