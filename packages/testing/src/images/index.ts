export { fakeImagesHandler } from './fake-images-handler';
export type { FakeImagesFault, FakeImagesOptions } from './fake-images-handler';
export { makePng } from './make-png';
export type { MakePngOptions } from './make-png';
export { geminiImagePart } from './gemini-image-part';
export type { GeminiImagePart } from './gemini-image-part';
