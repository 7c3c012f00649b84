export { createUpstreamFetch, type UpstreamFetch, type UpstreamFetchOptions } from './upstream-fetch';
export { nodeResolver, nodeTransport } from './page-fetch-transport';
export { nodeHashKey } from './hash-key';
export { createNodeListener, type FetchHandler, type NodeListenerErrorPhase, type NodeListenerOptions } from './node-listener';
export { type MemoryRelease, type MemoryReleaser, releaseMemoryWhenIdle, type ReleaseMemoryOptions } from './release-memory';
