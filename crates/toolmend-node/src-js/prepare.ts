/**
 * `prepareTools`: tool definitions rewritten for a model before they are sent (anchors the
 * family mis-reads removed, deep schemas flattened, contract hints added).
 * @module
 */
import * as native from './native.js';
import { InvalidArgumentError, ToolSpecError, native as call } from './errors.js';
import type { ToolObject } from './tools.js';

/** Options of {@link prepareTools}. */
export interface PrepareToolsOptions {
  /** The model the tools are sent to (chooses the rewrites). */
  model?: string;
  stripHints?: boolean;
  stripAnchors?: boolean;
  flatten?: boolean;
  flattenLeavesOver?: number;
  flattenDepthOver?: number;
  contractHints?: boolean;
  maxHintBytes?: number;
}

const OPTION_NAMES = new Set([
  'model', 'stripHints', 'stripAnchors', 'flatten', 'flattenLeavesOver', 'flattenDepthOver', 'contractHints', 'maxHintBytes',
]);

/** Rewrites tool definitions for `options.model`; returns them in the form given. */
export function prepareTools<T extends ToolObject>(tools: readonly T[], options: PrepareToolsOptions = {}): T[] {
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.has(key)) throw new InvalidArgumentError(`unknown prepareTools option ${JSON.stringify(key)}`);
  }
  const { model = '', ...rest } = options;
  const json = call(() => native.prepareTools(JSON.stringify(tools), model, rest), ToolSpecError);
  return JSON.parse(json) as T[];
}
