import type { ChatModelConfig } from '@tollgate/core';

/** The part type each input modality brings. */
const MODALITY_PARTS: Record<string, string> = { image: 'image_url', file: 'file', video: 'video_url', audio: 'audio_url' };

/**
 * The content-part types a model reads: text always, plus `model.part_types` when set, else one
 * type per input modality (image -> image_url, file -> file, video -> video_url, audio -> audio_url).
 */
export function readablePartTypes(model: ChatModelConfig): Set<string> {
  const types = new Set(['text']);
  if (model.part_types !== undefined) {
    for (const type of model.part_types) types.add(type);
    return types;
  }
  for (const modality of model.input_modalities ?? []) {
    const type = MODALITY_PARTS[modality];
    if (type !== undefined) types.add(type);
  }
  return types;
}
