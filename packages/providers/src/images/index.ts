// The image helpers live in @tollgate/validator (one copy, shared by the request checks and the
// adapters); they are re-exported here so code that imported them from providers keeps working.
export {
  ASPECT_RATIOS,
  imageDimensions,
  imagePixelSize,
  isAspectRatio,
  nearestAspectRatio,
  parseImageDataUrl,
  sniffBase64ImageType,
  sniffImageType,
} from '@tollgate/validator';
export type {
  AspectRatio,
  ImageDimensions,
  ImageResolution,
  ParseImageDataUrlResult,
  ReferenceImageType,
  SniffedImageType,
} from '@tollgate/validator';
