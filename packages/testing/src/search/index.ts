export { fakeSearxng } from './fake-searxng';
export type { FakeSearxngOptions } from './fake-searxng';
export { fakeBrave } from './fake-brave';
export type { FakeBraveOptions } from './fake-brave';
export { fakeSearchHits } from './fake-search-hits';
export type { FakeSearchHit } from './fake-search-hits';
