export { createPageFetcher } from './create-page-fetcher';
export { isPublicAddress } from './is-public-address';
export { parseHostAddress } from './parse-host-address';
export type {
  Page,
  PageFetchResult,
  PageFetcher,
  PageFetcherOptions,
  PageRequest,
  PageResolver,
  PageTransport,
  PageTransportRequest,
  PageUrlCheck,
} from './page-fetcher';
