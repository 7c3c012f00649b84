/**
 * A header value without the spaces and tabs at its ends (RFC 9110's optional whitespace), and
 * nothing else: `String.prototype.trim` would also take a no-break space or a form feed off a key.
 *
 * @example
 * trimOptionalWhitespace(' \tsk_svc_x\u00a0 '); // 'sk_svc_x\u00a0'
 */
export function trimOptionalWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isSpaceOrTab(text.charCodeAt(start))) start++;
  while (end > start && isSpaceOrTab(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

const isSpaceOrTab = (code: number) => code === 0x20 || code === 0x09;
