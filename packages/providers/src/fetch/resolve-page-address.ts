import { isPublicAddress } from './is-public-address';
import type { PageFetcherOptions } from './page-fetcher';
import { parseHostAddress } from './parse-host-address';

/** The refusal of a host that is (or resolves to) a non-public address; it never echoes the address. */
export const NOT_PUBLIC_MESSAGE = 'url must point to a public address; its host is a private, local or reserved address.';

/** The result of {@link resolvePageAddress}. */
export type ResolvePageAddressResult = { ok: true; address: string } | { ok: false; code: 'invalid_parameter' | 'upstream_unavailable'; message: string };

/**
 * The address to connect to for a URL: its IP literal, or every address its name resolves to —
 * all of which must be public (one private address refuses the name: DNS answers rotate, and a
 * name that can reach the operator's network is not fetched). Refusals never echo the address.
 *
 * @example
 * await resolvePageAddress(new URL('http://2130706433/'), options); // { ok: false, code: 'invalid_parameter', … }
 */
export async function resolvePageAddress(url: URL, options: Pick<PageFetcherOptions, 'resolve' | 'allowAddress'>): Promise<ResolvePageAddressResult> {
  const literal = parseHostAddress(url.hostname);
  let addresses: string[];
  if (literal !== undefined) {
    addresses = [literal];
  } else {
    try {
      addresses = await options.resolve(url.hostname);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      return { ok: false, code: 'upstream_unavailable', message: 'The host of url could not be resolved.' };
    }
  }
  const checked: string[] = [];
  for (const address of addresses) {
    const canonical = parseHostAddress(address);
    const admitted = canonical !== undefined && (isPublicAddress(canonical) || options.allowAddress?.(canonical) === true);
    if (!admitted) {
      return { ok: false, code: 'invalid_parameter', message: NOT_PUBLIC_MESSAGE };
    }
    checked.push(canonical);
  }
  return { ok: true, address: checked[0] as string };
}
