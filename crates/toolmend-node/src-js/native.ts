/**
 * The napi-rs addon, loaded through the generated `binding.js`.
 *
 * `binding.js` is napi-rs's loader: it picks the `.node` file for this platform, first beside
 * the package (a local build), then from the per-platform package in `optionalDependencies`
 * (`toolmend-linux-x64-gnu`, `toolmend-darwin-arm64`, …). Only this module names it.
 * @module
 */
export * from '../binding.js';
