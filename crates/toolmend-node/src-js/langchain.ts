/**
 * `toolmend/langchain`: toolmend for LangChain.js.
 *
 * {@link repairInvalidToolCalls} turns an `AIMessage`'s `invalid_tool_calls` (arguments the
 * provider's parser could not read) into repaired `tool_calls`, and repairs `tool_calls` whose
 * arguments do not match the tool's schema; {@link toolRepair} does it as a runnable step after
 * a chat model (`model.pipe(toolRepair(tools))`). A call toolmend cannot save stays in
 * `invalid_tool_calls`, with toolmend's retry message as its `error`.
 * @module
 */
import { AIMessage, type InvalidToolCall, type ToolCall } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { toJsonSchema } from '@langchain/core/utils/json_schema';

import { Mender, type MenderOptions } from './mender.js';
import { ToolSet, type JsonSchema, type McpTool, type ToolsLike } from './tools.js';

/** A LangChain tool (`tool(...)`, `StructuredTool`, `DynamicStructuredTool`): a name and a schema. */
export interface LangChainToolLike {
  name: string;
  description?: string;
  /** A zod schema, a Standard Schema or a JSON Schema. */
  schema?: unknown;
}

/** The tools of {@link repairInvalidToolCalls}: LangChain tools, tool objects, or a `ToolSet`. */
export type LangChainTools = readonly LangChainToolLike[] | ToolsLike;

/** Settings of {@link repairInvalidToolCalls} and {@link toolRepair}. */
export interface LangChainRepairSettings {
  /** Options of the `Mender` built for the tools. */
  mender?: MenderOptions;
}

function isLangChainTool(tool: unknown): tool is LangChainToolLike {
  return typeof tool === 'object' && tool !== null && 'name' in tool && 'schema' in tool;
}

function toolSetOf(tools: LangChainTools): ToolSet {
  if (tools instanceof ToolSet) return tools;
  if (Array.isArray(tools) && tools.some(isLangChainTool)) {
    // LangChain tools become MCP tool objects; tool dicts (OpenAI, Anthropic) stay as given.
    const list = (tools as readonly unknown[]).map((t) => {
      if (!isLangChainTool(t)) return t;
      const schema = t.schema === undefined ? { type: 'object' } : toJsonSchema(t.schema as Parameters<typeof toJsonSchema>[0]);
      const entry: McpTool = { name: t.name, inputSchema: schema as JsonSchema };
      if (t.description !== undefined) entry.description = t.description;
      return entry;
    });
    return ToolSet.from(list as McpTool[]);
  }
  return ToolSet.of(tools as ToolsLike);
}

const menders = new WeakMap<object, Mender>();

function menderFor(tools: LangChainTools, settings: LangChainRepairSettings): Mender {
  const cached = settings.mender === undefined ? menders.get(tools) : undefined;
  if (cached !== undefined) return cached;
  const mender = new Mender(toolSetOf(tools), settings.mender ?? {});
  if (settings.mender === undefined) menders.set(tools, mender);
  return mender;
}

/**
 * The message with its broken tool calls repaired: `invalid_tool_calls` toolmend can read
 * become `tool_calls`, and `tool_calls` whose arguments fail the tool's schema are repaired.
 * Returns the same message when nothing changed.
 */
export function repairInvalidToolCalls(message: AIMessage, tools: LangChainTools, settings: LangChainRepairSettings = {}): AIMessage {
  const mender = menderFor(tools, settings);
  const toolCalls: ToolCall[] = [];
  const invalid: InvalidToolCall[] = [];
  let changed = false;
  for (const call of message.tool_calls ?? []) {
    const result = mender.repairCall(call.name, JSON.stringify(call.args ?? {}));
    if (result.status === 'repaired') {
      toolCalls.push({ ...call, type: 'tool_call', name: result.name, args: result.arguments as Record<string, unknown> });
      changed = true;
    } else {
      toolCalls.push(call);
    }
  }
  for (const call of message.invalid_tool_calls ?? []) {
    if (call.name === undefined) {
      invalid.push(call);
      continue;
    }
    const result = mender.repairCall(call.name, call.args ?? '');
    changed = true;
    if (result.dispatchable) {
      const repaired: ToolCall = { type: 'tool_call', name: result.name, args: result.arguments as Record<string, unknown> };
      if (call.id !== undefined) repaired.id = call.id;
      toolCalls.push(repaired);
    } else {
      const error = result.error ?? call.error;
      invalid.push(error === undefined ? call : { ...call, error });
    }
  }
  if (!changed) return message;
  return new AIMessage({
    content: message.content,
    ...(message.id !== undefined && { id: message.id }),
    ...(message.name !== undefined && { name: message.name }),
    additional_kwargs: message.additional_kwargs,
    response_metadata: message.response_metadata,
    ...(message.usage_metadata !== undefined && { usage_metadata: message.usage_metadata }),
    tool_calls: toolCalls,
    invalid_tool_calls: invalid,
  });
}

/** {@link repairInvalidToolCalls} as a runnable step: `model.pipe(toolRepair(tools))`. */
export function toolRepair(tools: LangChainTools, settings: LangChainRepairSettings = {}) {
  return RunnableLambda.from((message: AIMessage) => repairInvalidToolCalls(message, tools, settings));
}

/**
 * A LangChain v1 agent middleware (`createAgent({ middleware: [toolmendMiddleware()] })`) that
 * repairs each model response's tool calls against the tools of that call, as
 * {@link repairInvalidToolCalls} does. Needs the `langchain` package (v1).
 */
export function toolmendMiddleware(settings: LangChainRepairSettings = {}) {
  // Loaded here, not at the top: `toolmend/langchain` works with `@langchain/core` alone.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createMiddleware } = require('langchain') as typeof import('langchain');
  return createMiddleware({
    name: 'toolmend',
    wrapModelCall: async (request, handler) => {
      const response = await handler(request);
      const tools = request.tools as unknown as LangChainTools;
      if (!(response instanceof AIMessage) || !Array.isArray(tools) || tools.length === 0) return response;
      // The mender is built once per tools array (the agent passes the same one on every call).
      return repairInvalidToolCalls(response, tools, settings);
    },
  });
}
