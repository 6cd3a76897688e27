/**
 * toolmend: repairs the tool calls LLMs get wrong, in process.
 *
 * ```ts
 * import { Mender, ToolSet } from 'toolmend';
 * const mender = new Mender(ToolSet.fromOpenAI(tools));
 * const call = mender.repairCall('read_file', '{"file_path": "a.txt", "limit": "20"}');
 * call.status;        // 'repaired'
 * call.argumentsText; // '{"path":"a.txt","limit":20}'
 * ```
 *
 * Adapters: `toolmend/ai-sdk` (the AI SDK's repair hook, middleware and stop condition) and
 * `toolmend/langchain`.
 * @module
 */
import * as native from './native.js';

export {
  ToolSet,
  aiSdkJsonSchema,
  type AiSdkToolSet,
  type AnthropicTool,
  type FlatTool,
  type JsonSchema,
  type McpTool,
  type OpenAITool,
  type ToolObject,
  type ToolsLike,
} from './tools.js';
export {
  CallResult,
  Mender,
  Session,
  type AssistantMessage,
  type CallOrigin,
  type CallOutcome,
  type CallStatus,
  type JsonValue,
  type MenderOptions,
  type RecoverMode,
  type Repair,
  type RunTurnOptions,
  type SessionOptions,
  type TurnResult,
} from './mender.js';
export {
  StreamRecoverer, recover, type LostCall, type Recovered, type RecoveredCall, type RecoverOptions,
} from './recover.js';
export { prepareTools, type PrepareToolsOptions } from './prepare.js';
export { jsonrepair, salvageJson, type Salvaged, type SalvageJsonOptions } from './jsonrepair.js';
export {
  InvalidArgumentError,
  JSONRepairError,
  JsonSyntaxError,
  NoJsonError,
  NonFiniteError,
  SalvageError,
  ToolSpecError,
  ToolmendError,
  TooDeepError,
  TooLargeError,
  type ErrorCode,
} from './errors.js';

/** The repair kinds toolmend reports (DESIGN §5 names), in catalogue order. */
export function repairKinds(): string[] {
  return native.repairKinds();
}

/** The version of the Rust engine inside the addon. */
export const engineVersion: string = native.engineVersion();
