export {
  type BucketProviderOptions,
  type BucketSkillOptions,
  BucketSkillProvider,
  type SkillBucket,
  type SkillBucketObject,
  type SkillBucketPage,
} from "./core.js";
export { decodeDescription, encodeDescription, MAX_DESCRIPTION_LENGTH } from "./description.js";
export {
  type R2BucketLike,
  type R2ListOptionsLike,
  type R2ObjectLike,
  R2SkillProvider,
  type R2SkillProviderOptions,
  r2SkillBucket,
} from "./r2.js";
export {
  type S3BucketSource,
  S3SkillProvider,
  type S3SkillProviderOptions,
  s3SkillBucket,
} from "./s3.js";
