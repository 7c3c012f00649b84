import { describe, expect, it } from 'vitest';
import { geminiImagePart } from './gemini-image-part';
import { readPngChunks } from '../../test/png-reader.fixture';

describe('geminiImagePart', () => {
  it('holds a valid PNG of the size in a Gemini inlineData part', async () => {
    const part = await geminiImagePart(768, 1024, 3);
    expect(part.inlineData.mimeType).toBe('image/png');
    const png = Uint8Array.from(atob(part.inlineData.data), (char) => char.charCodeAt(0));
    const chunks = readPngChunks(png);
    expect(chunks.every((chunk) => chunk.crcMatches)).toBe(true);
    const view = new DataView(png.buffer);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([768, 1024]);
    expect((await geminiImagePart(768, 1024, 4)).inlineData.data).not.toBe(part.inlineData.data);
  });
});
