import type { ErrorCode } from '@tollgate/core';
import type * as v from 'valibot';
import { fail, type Fail } from './fail';

type Issue = v.BaseIssue<unknown>;

/** The first-phase codes, most senior first: a request gets the first that applies. */
const PRECEDENCE: ErrorCode[] = ['invalid_request_body', 'too_many_messages', 'invalid_output_limit', 'invalid_parameter'];
const OUTPUT_LIMIT_FIELDS = new Set(['max_tokens', 'max_completion_tokens', 'max_output_tokens']);
/** The lists whose length is the message count: chat `messages`, Responses `input`. */
const MESSAGE_LISTS = new Set(['messages', 'input']);

/** `messages[3].content[0].image_url.detail` for an issue's path. */
export function issuePath(issue: Issue): string {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = (item as { key: unknown }).key;
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** The code of one valibot issue, by its kind and where it sits. */
export function issueCode(issue: Issue): ErrorCode {
  const path = issue.path ?? [];
  const top = (path[0] as { key?: unknown } | undefined)?.key;
  if (isUnknownField(issue)) return 'invalid_parameter';
  if (issue.kind === 'schema' || top === 'model') return 'invalid_request_body';
  if (typeof top === 'string' && OUTPUT_LIMIT_FIELDS.has(top)) return 'invalid_output_limit';
  if (typeof top === 'string' && MESSAGE_LISTS.has(top) && path.length === 1 && issue.type === 'max_length') return 'too_many_messages';
  return 'invalid_parameter';
}

/** A member a strict object does not list (a missing member has the same issue type, expecting its key). */
function isUnknownField(issue: Issue): boolean {
  return issue.type === 'strict_object' && issue.expected === 'never';
}

/** The sentence of an issue: it always names the field. */
function issueMessage(issue: Issue, code: ErrorCode): string {
  const field = issuePath(issue) || 'the body';
  if (isUnknownField(issue)) return `${field} is not a field of this endpoint.`;
  if (code === 'invalid_request_body') {
    if (issue.received === 'undefined') return `${field} is required.`;
    // Only a schema issue is a wrong JSON type; a rule on the value (model's minimum length) says its own rule.
    if (issue.kind !== 'schema' || issue.type === 'custom') return `${field} ${issue.message}.`;
    return `${field} has the wrong JSON type: expected ${issue.expected ?? 'another type'}, received ${issue.received}.`;
  }
  return `${field} ${issue.message}.`;
}

/** The refusal of a failed parse: the most senior code of all its issues, the first issue of that code. */
export function issuesToFail(issues: readonly Issue[]): Fail {
  let best: Issue | undefined;
  let bestRank = PRECEDENCE.length;
  let bestCode: ErrorCode = 'invalid_request_body';
  for (const issue of issues) {
    const code = issueCode(issue);
    const rank = PRECEDENCE.indexOf(code);
    if (rank < bestRank) {
      best = issue;
      bestRank = rank;
      bestCode = code;
    }
  }
  if (best === undefined) return fail('invalid_request_body', 'The request body is not what this endpoint takes.');
  return fail(bestCode, issueMessage(best, bestCode));
}
