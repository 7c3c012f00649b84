/** The OpenAI error body: `{ error: { message, type, param, code } }`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** A JSON Response carrying an OpenAI error body, as api.openai.com answers. */
export function openaiErrorResponse(status: number, error: OpenAIErrorBody['error'], headers: Record<string, string> = {}): Response {
  return Response.json({ error } satisfies OpenAIErrorBody, { status, headers });
}

/** A 400 `invalid_request_error` naming the parameter at fault. */
export function invalidRequest(param: string | null, message: string, code: string | null = null): Response {
  return openaiErrorResponse(400, { message, type: 'invalid_request_error', param, code });
}
