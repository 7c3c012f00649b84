/** Longest URL taken, in characters. */
export const MAX_URL_LENGTH = 8192;

/** The result of {@link checkPageUrl}. */
export type CheckPageUrlResult = { ok: true; url: URL } | { ok: false; message: string };

/**
 * Checks the syntax of a page address: http or https, no credentials, a port that is the
 * scheme's default, 80, 443 or 1024-65535 (well-known service ports below 1024 are refused so the
 * fetcher cannot talk to SMTP, SSH and the like on public hosts). The host is checked later,
 * after DNS, by the fetcher.
 *
 * @example
 * checkPageUrl('https://example.com/a#top');   // { ok: true, url: URL }
 * checkPageUrl('file:///etc/passwd');          // { ok: false, message: 'url must use http or https.' }
 */
export function checkPageUrl(input: string | URL, base?: URL): CheckPageUrlResult {
  if (typeof input === 'string' && input.length > MAX_URL_LENGTH) {
    return { ok: false, message: `url must be at most ${MAX_URL_LENGTH} characters.` };
  }
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    return { ok: false, message: 'url must be an absolute http or https URL.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, message: 'url must use http or https.' };
  if (url.username !== '' || url.password !== '') return { ok: false, message: 'url must not contain credentials.' };
  if (url.port !== '') {
    const port = Number(url.port);
    if (port !== 80 && port !== 443 && port < 1024) {
      return { ok: false, message: 'url must use port 80, 443 or a port from 1024 to 65535.' };
    }
  }
  // The fragment never leaves the client; dropping it keeps it out of upstream requests.
  url.hash = '';
  return { ok: true, url };
}
