/**
 * `ToolSet`: the tools of a request compiled once, from any tool form JavaScript code holds
 * (OpenAI, Anthropic, MCP, flat `{name, parameters}`, AI SDK tool sets).
 * @module
 */
import * as native from './native.js';
import { ToolSpecError, native as call } from './errors.js';

/** A JSON Schema (draft 7 or 2020-12), as a plain object. */
export type JsonSchema = { [key: string]: unknown } | boolean;

/** An OpenAI Chat Completions tool: `{type: 'function', function: {name, description, parameters}}`. */
export interface OpenAITool {
  type?: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema; strict?: boolean | null };
}

/** An Anthropic Messages tool: `{name, description, input_schema}`. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonSchema;
}

/** An MCP tool (`tools/list`): `{name, description, inputSchema, annotations}`. */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; [key: string]: unknown };
}

/** A flat tool: `{name, description, parameters}`. */
export interface FlatTool {
  name: string;
  description?: string;
  parameters?: JsonSchema;
}

/** Any tool object toolmend reads. */
export type ToolObject = OpenAITool | AnthropicTool | McpTool | FlatTool;

/**
 * An AI SDK tool set: tool name → a tool whose `inputSchema` (v5+) or `parameters` (v4) is a
 * JSON Schema, an AI SDK `Schema` (`jsonSchema(...)`, `zodSchema(...)`) or a Standard Schema
 * that can give its JSON Schema (zod 4).
 */
export type AiSdkToolSet = Record<string, { description?: string; inputSchema?: unknown; parameters?: unknown }>;

/** What `new Mender(tools)` and `recover(text, tools)` take: a `ToolSet` or tool objects. */
export type ToolsLike = ToolSet | readonly ToolObject[] | { tools: readonly McpTool[] };

/** The tools of a request, compiled once; reuse it across calls and menders. */
export class ToolSet {
  /** @internal */
  readonly native: native.ToolSet;

  private constructor(tools: unknown) {
    let json: string;
    try {
      json = JSON.stringify(tools);
    } catch (error) {
      throw new ToolSpecError(`tools cannot be written as JSON: ${String(error)}`, { cause: error });
    }
    this.native = call(() => new native.ToolSet(json), ToolSpecError);
  }

  /** Tools in any form (OpenAI, Anthropic, MCP, flat); each object may be in its own. */
  static from(tools: readonly ToolObject[] | { tools: readonly McpTool[] }): ToolSet {
    return new ToolSet(tools);
  }

  /** Tools in the OpenAI Chat Completions form. */
  static fromOpenAI(tools: readonly OpenAITool[] | readonly ToolObject[]): ToolSet {
    return new ToolSet(tools);
  }

  /** Tools in the Anthropic Messages form. */
  static fromAnthropic(tools: readonly AnthropicTool[] | readonly ToolObject[]): ToolSet {
    return new ToolSet(tools);
  }

  /** MCP tools: a `tools/list` result or its `tools` array. */
  static fromMcp(tools: readonly McpTool[] | { tools: readonly McpTool[] }): ToolSet {
    return new ToolSet(tools);
  }

  /**
   * An AI SDK tool set (`{ name: tool({ inputSchema, execute }) }`).
   *
   * @throws {ToolSpecError} when a schema gives its JSON Schema only asynchronously (then use
   *   {@link ToolSet.fromAiSdkAsync}).
   */
  static fromAiSdk(tools: AiSdkToolSet): ToolSet {
    const list = Object.entries(tools).map(([name, tool]) => {
      const schema = aiSdkJsonSchema(tool.inputSchema ?? tool.parameters);
      if (isThenable(schema)) {
        throw new ToolSpecError(`the schema of tool ${JSON.stringify(name)} is asynchronous: use ToolSet.fromAiSdkAsync`);
      }
      return mcpTool(name, tool.description, schema);
    });
    return new ToolSet(list);
  }

  /** {@link ToolSet.fromAiSdk} for schemas that give their JSON Schema as a promise. */
  static async fromAiSdkAsync(tools: AiSdkToolSet): Promise<ToolSet> {
    const list = await Promise.all(
      Object.entries(tools).map(async ([name, tool]) =>
        mcpTool(name, tool.description, await aiSdkJsonSchema(tool.inputSchema ?? tool.parameters)),
      ),
    );
    return new ToolSet(list);
  }

  /** `tools` as a `ToolSet`: itself, or tool objects compiled now. */
  static of(tools: ToolsLike): ToolSet {
    return tools instanceof ToolSet ? tools : new ToolSet(tools);
  }

  /** The declared tool names, in order. */
  get names(): string[] {
    return this.native.names;
  }

  /** Why tool objects or schemas were refused (the rest of the set is built regardless). */
  get rejected(): string[] {
    return this.native.rejected;
  }

  /** How many tools the set holds. */
  get size(): number {
    return this.native.size;
  }

  /** Whether a tool of exactly this name is declared. */
  has(name: string): boolean {
    return this.native.has(name);
  }

  /**
   * Whether the tool may change things (its cut-off calls are never closed); a tool that does
   * not say it is read-only counts as mutating. `undefined` for an unknown name.
   */
  isMutating(name: string): boolean | undefined {
    return this.native.isMutating(name) ?? undefined;
  }
}

function mcpTool(name: string, description: string | undefined, schema: unknown): McpTool {
  const tool: McpTool = { name, inputSchema: (schema ?? { type: 'object' }) as JsonSchema };
  if (description !== undefined) tool.description = description;
  return tool;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** The JSON Schema of an AI SDK `inputSchema`: an AI SDK `Schema`, a Standard Schema, or JSON Schema. */
export function aiSdkJsonSchema(schema: unknown): unknown {
  if (schema == null) return { type: 'object' };
  if (typeof schema !== 'object') return schema;
  const record = schema as Record<string | symbol, unknown>;
  // AI SDK `Schema` (`jsonSchema()`, `zodSchema()`): a `jsonSchema` getter, maybe a promise.
  if ('jsonSchema' in record && 'validate' in record) return record['jsonSchema'];
  // Standard JSON Schema (zod >= 4.2, valibot, arktype): `~standard.jsonSchema.input()`.
  const standard = record['~standard'] as { jsonSchema?: { input?: (o: { target: string }) => unknown } } | undefined;
  if (standard !== undefined) {
    const input = standard.jsonSchema?.input;
    if (typeof input === 'function') return input.call(standard.jsonSchema, { target: 'draft-07' });
    throw new ToolSpecError('a Standard Schema without JSON Schema conversion cannot be read; wrap it in jsonSchema()');
  }
  return schema;
}
