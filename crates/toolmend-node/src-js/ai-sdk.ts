/**
 * `toolmend/ai-sdk`: toolmend for the Vercel AI SDK (v6; v5's and v4's repair hook too).
 *
 * - {@link repairToolCall} / {@link createRepairToolCall}: the `experimental_repairToolCall`
 *   hook. Name and argument repair against the tool's JSON Schema; a cut-off call of a mutating
 *   tool is never closed (the hook returns `null`, so the SDK reports the error to the model).
 * - {@link recoverToolCallsMiddleware}: a `wrapLanguageModel` middleware turning tool calls the
 *   model wrote as text (Hermes `<tool_call>`, Qwen XML, …) into tool-call parts, for
 *   `generateText` and `streamText` (streaming holds back only a suffix that could start a call).
 * - {@link stormStop}: a `stopWhen` condition that fires on the storm breaker's verdict.
 *
 * The SDK is not imported: the types below are the structural parts of its interfaces this
 * module reads, so any `ai` 4–6 fits.
 * @module
 */
import { randomUUID } from 'node:crypto';

import { Mender, Session, type MenderOptions, type CallResult } from './mender.js';
import { StreamRecoverer, recover, type RecoveredCall } from './recover.js';
import { ToolSet, aiSdkJsonSchema, type McpTool, type JsonSchema } from './tools.js';

/** The failing call as the SDK hands it to the repair hook (`input` v5+, `args` v4). */
export interface AiSdkToolCall {
  type?: 'tool-call';
  toolCallId: string;
  toolName: string;
  input?: string;
  args?: string;
  [key: string]: unknown;
}

/** The repair hook's argument (`experimental_repairToolCall`), as v4–v6 pass it. */
export interface RepairToolCallOptions {
  toolCall: AiSdkToolCall;
  tools?: Record<string, { description?: string; inputSchema?: unknown; parameters?: unknown }>;
  /** v5+: the JSON Schema of a tool. */
  inputSchema?: (options: { toolName: string }) => PromiseLike<unknown> | unknown;
  /** v4: the JSON Schema of a tool. */
  parameterSchema?: (options: { toolName: string }) => unknown;
  /** `NoSuchToolError` or `InvalidToolInputError` (v4: `InvalidToolArgumentsError`). */
  error?: unknown;
  [key: string]: unknown;
}

/** Settings of {@link createRepairToolCall}. */
export interface RepairHookSettings {
  /** Options of the `Mender` built for each tool set. */
  mender?: MenderOptions;
  /** Called with each call toolmend repaired (for logs and metrics). */
  onRepair?: (result: CallResult, original: AiSdkToolCall) => void;
  /** Called with each call toolmend could not save (the SDK then reports the error). */
  onGiveUp?: (result: CallResult, original: AiSdkToolCall) => void;
}

type AiSdkTools = NonNullable<RepairToolCallOptions['tools']>;

async function schemaOf(name: string, tool: AiSdkTools[string], options: RepairToolCallOptions): Promise<unknown> {
  const getter = options.inputSchema ?? options.parameterSchema;
  if (getter !== undefined) {
    try {
      return await getter({ toolName: name });
    } catch {
      // Fall through to the tool's own schema.
    }
  }
  return await aiSdkJsonSchema(tool.inputSchema ?? tool.parameters);
}

/** A `Mender` over the SDK's tool set, built once per tools object. */
function menderCache(settings: RepairHookSettings) {
  const cache = new WeakMap<object, Promise<Mender>>();
  return (options: RepairToolCallOptions): Promise<Mender> => {
    const tools = options.tools ?? {};
    let mender = cache.get(tools);
    if (mender === undefined) {
      mender = (async () => {
        const list: McpTool[] = await Promise.all(
          Object.entries(tools).map(async ([name, tool]) => {
            const entry: McpTool = { name, inputSchema: ((await schemaOf(name, tool, options)) ?? { type: 'object' }) as JsonSchema };
            if (tool.description !== undefined) entry.description = tool.description;
            return entry;
          }),
        );
        return new Mender(ToolSet.fromMcp(list), settings.mender);
      })();
      cache.set(tools, mender);
    }
    return mender;
  };
}

/**
 * A repair hook for `generateText`/`streamText`'s `experimental_repairToolCall`.
 *
 * Returns the call with its name and input repaired, or `null` when toolmend cannot save it
 * without guessing (the SDK then reports the error to the model, as without a hook). A call cut
 * off inside a mutating tool's arguments is never closed.
 */
export function createRepairToolCall(settings: RepairHookSettings = {}) {
  const menderFor = menderCache(settings);
  return async function repairToolCall<T extends AiSdkToolCall>(options: RepairToolCallOptions & { toolCall: T }): Promise<T | null> {
    const call = options.toolCall;
    const v4 = call.input === undefined && call.args !== undefined;
    const raw: unknown = v4 ? call.args : call.input;
    const text = typeof raw === 'string' ? raw : JSON.stringify(raw ?? {});
    const mender = await menderFor(options);
    const result = mender.repairCall(call.toolName, text);
    if (result.status !== 'repaired' && result.status !== 'recovered') {
      // `valid`: the SDK's own validator refused what the schema allows; nothing to repair.
      if (result.status !== 'valid') settings.onGiveUp?.(result, call);
      return null;
    }
    settings.onRepair?.(result, call);
    return v4
      ? { ...call, toolName: result.name, args: result.argumentsText }
      : { ...call, toolName: result.name, input: result.argumentsText };
  };
}

/** {@link createRepairToolCall} with default settings: `experimental_repairToolCall: repairToolCall`. */
export const repairToolCall = createRepairToolCall();

/** The parts of the SDK's language-model call options the middleware reads. */
interface CallParams {
  tools?: ReadonlyArray<{ type: string; name: string; description?: string; inputSchema?: unknown; parameters?: unknown }>;
  [key: string]: unknown;
}

/** A content or stream part (structural: only `type` is read on the parts passed through). */
type Part = { type: string; [key: string]: unknown };

/** Settings of {@link recoverToolCallsMiddleware}. */
export interface RecoverMiddlewareSettings {
  /** Most calls recovered from one text part. */
  maxCalls?: number;
  /** Called with each call recovered from text. */
  onRecover?: (call: RecoveredCall) => void;
}

/** `finish_reason` `tool-calls` in the SDK's form (v3: `{unified, raw}`; v2: a string). */
function toolCallsFinish(reason: unknown): unknown {
  if (typeof reason === 'string' || reason == null) return 'tool-calls';
  return { ...(reason as object), unified: 'tool-calls' };
}

function toolCallPart(call: RecoveredCall): Part {
  return { type: 'tool-call', toolCallId: `toolmend-${randomUUID()}`, toolName: call.name, input: call.arguments };
}

/** The function tools of a model call as a `ToolSet`, or `null` when there are none. */
function toolSetFor(params: CallParams, cache: Map<string, ToolSet>): ToolSet | null {
  const tools = (params.tools ?? []).filter((t) => t.type === 'function');
  if (tools.length === 0) return null;
  const list = tools.map((t) => ({ name: t.name, inputSchema: (t.inputSchema ?? t.parameters ?? { type: 'object' }) as JsonSchema }));
  const key = JSON.stringify(list);
  let set = cache.get(key);
  if (set === undefined) {
    set = ToolSet.fromMcp(list);
    if (cache.size > 64) cache.clear();
    cache.set(key, set);
  }
  return set;
}

/**
 * A language-model middleware (`wrapLanguageModel({ model, middleware })`) that recovers tool
 * calls the model wrote as text into tool-call parts, for `generate` and `stream`. Text without
 * a call passes through unchanged; in a stream, only a suffix that could start a call is held
 * back until it is known not to be one.
 */
export function recoverToolCallsMiddleware(settings: RecoverMiddlewareSettings = {}) {
  const cache = new Map<string, ToolSet>();
  const options = settings.maxCalls === undefined ? {} : { maxCalls: settings.maxCalls };
  return {
    specificationVersion: 'v3' as const,
    middlewareVersion: 'v2' as const,

    async wrapGenerate<C extends { type: string }, R extends { content: C[]; finishReason: unknown }>({ doGenerate, params }: { doGenerate: () => PromiseLike<R>; params: CallParams }): Promise<R> {
      const result = await doGenerate();
      const set = toolSetFor(params, cache);
      if (set === null) return result;
      let found = 0;
      const content: Part[] = [];
      for (const part of result.content as unknown as Part[]) {
        if (part.type !== 'text' || typeof part['text'] !== 'string') {
          content.push(part);
          continue;
        }
        const recovered = recover(part['text'], set, options);
        if (recovered.calls.length === 0) {
          content.push(part);
          continue;
        }
        if (recovered.text.trim() !== '') content.push({ ...part, text: recovered.text });
        for (const call of recovered.calls) {
          settings.onRecover?.(call);
          content.push(toolCallPart(call));
          found += 1;
        }
      }
      return found === 0 ? result : { ...result, content: content as unknown as C[], finishReason: toolCallsFinish(result.finishReason) };
    },

    async wrapStream<S extends { type: string }, R extends { stream: ReadableStream<S> }>({ doStream, params }: { doStream: () => PromiseLike<R>; params: CallParams }): Promise<R> {
      const result = await doStream();
      const set = toolSetFor(params, cache);
      if (set === null) return result;
      const open = new Map<string, StreamRecoverer>();
      let found = 0;
      const emit = (controller: TransformStreamDefaultController<Part>, id: string, text: string, calls: readonly RecoveredCall[]) => {
        if (text !== '') controller.enqueue({ type: 'text-delta', id, delta: text });
        for (const call of calls) {
          settings.onRecover?.(call);
          controller.enqueue(toolCallPart(call));
          found += 1;
        }
      };
      const stream = (result.stream as unknown as ReadableStream<Part>).pipeThrough(
        new TransformStream<Part, Part>({
          transform(part, controller) {
            const id = typeof part['id'] === 'string' ? part['id'] : '';
            switch (part.type) {
              case 'text-start':
                open.set(id, new StreamRecoverer(set, options));
                controller.enqueue(part);
                return;
              case 'text-delta': {
                const recoverer = open.get(id);
                const delta = part['delta'] ?? part['textDelta'];
                if (recoverer === undefined || typeof delta !== 'string') break;
                const out = recoverer.feed(delta);
                if (out.text !== '') controller.enqueue({ ...part, delta: out.text });
                emit(controller, id, '', out.calls);
                return;
              }
              case 'text-end': {
                const recoverer = open.get(id);
                if (recoverer === undefined) break;
                open.delete(id);
                const out = recoverer.finish();
                emit(controller, id, out.text, []);
                controller.enqueue(part);
                emit(controller, id, '', out.calls);
                return;
              }
              case 'finish':
                for (const [openId, recoverer] of open) {
                  const out = recoverer.finish();
                  emit(controller, openId, out.text, out.calls);
                }
                open.clear();
                if (found > 0) {
                  controller.enqueue({ ...part, finishReason: toolCallsFinish(part['finishReason']) });
                  return;
                }
                break;
              default:
                break;
            }
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream: stream as unknown as ReadableStream<S> };
    },
  };
}

/** The parts of a step the stop condition reads (`steps[i].toolCalls`). */
interface StepLike {
  toolCalls?: ReadonlyArray<{ toolName: string; input?: unknown; args?: unknown; toolCallId?: string }>;
}

/** Settings of {@link stormStop}. */
export interface StormStopSettings {
  /** Calls the storm breaker looks back over (default 6). */
  window?: number;
  /** The `threshold`th identical call within `window` is a storm (default 3). */
  threshold?: number;
  /** Called with the calls the breaker suppressed, when it fires. */
  onStorm?: (calls: CallResult[]) => void;
}

/**
 * A `stopWhen` condition that fires on the storm breaker's verdict: the same call repeated
 * `threshold` times within `window` calls. Make one per `generateText`/`streamText` call
 * (it remembers the steps it has seen).
 */
export function stormStop(settings: StormStopSettings = {}) {
  const fresh = () =>
    new Session({
      ...(settings.window !== undefined && { window: settings.window }),
      ...(settings.threshold !== undefined && { threshold: settings.threshold }),
    });
  let session = fresh();
  let seen = 0;
  return ({ steps }: { steps: readonly StepLike[] }): boolean => {
    if (steps.length < seen) {
      // A new run reusing the condition: start over.
      session = fresh();
      seen = 0;
    }
    let storm = false;
    for (const step of steps.slice(seen)) {
      const calls = step.toolCalls ?? [];
      if (calls.length === 0) continue;
      const names = [...new Set(calls.map((c) => c.toolName))];
      const mender = new Mender(ToolSet.fromMcp(names.map((name) => ({ name, inputSchema: { type: 'object' } }))), { recover: 'off' });
      const turn = mender.runTurn(session, {
        content: null,
        tool_calls: calls.map((c, i) => {
          const input = c.input ?? c.args ?? {};
          return { id: c.toolCallId ?? String(i), type: 'function' as const, function: { name: c.toolName, arguments: typeof input === 'string' ? input : JSON.stringify(input) } };
        }),
      });
      const suppressed = turn.calls.filter((c) => c.status === 'suppressed');
      if (suppressed.length > 0) {
        settings.onStorm?.(suppressed);
        storm = true;
      }
    }
    seen = steps.length;
    return storm;
  };
}
