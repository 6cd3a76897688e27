/**
 * `recover` and `StreamRecoverer`: tool calls the model wrote as text (Hermes `<tool_call>`,
 * Qwen XML, DSML, Mistral `[TOOL_CALLS]`, …), found in whole text or as it streams in.
 * @module
 */
import * as native from './native.js';
import { native as call } from './errors.js';
import { ToolSet, type ToolsLike } from './tools.js';

/** One call found in text. */
export interface RecoveredCall {
  /** The declared tool it calls. */
  readonly name: string;
  /** The name as the model wrote it, when that differed. */
  readonly writtenName: string | null;
  /** The markup family (`hermes`, `qwen_xml`, …). */
  readonly family: string;
  /** The arguments as JSON text (repair them with `Mender.repairCall`). */
  readonly arguments: string;
  /** `[start, end)` of the markup: UTF-16 indices into the text given (or fed so far). */
  readonly span: readonly [number, number];
}

/**
 * A call of a declared tool in a recovered block that could not be read: never recovered,
 * never dropped silently (a JSON call list or a Cohere action list is read entry by entry, so an
 * entry whose arguments cannot be read loses only itself).
 */
export interface LostCall {
  /** The declared tool it calls. */
  readonly name: string;
  /** The markup family of its block. */
  readonly family: string;
  /** What could not be read, as written: the call's arguments, or its whole list entry. */
  readonly text: string;
  /** How many recovered calls come before it (for a stream: calls released so far). */
  readonly position: number;
  /** `[start, end)` of its block's markup, shared with the block's calls (UTF-16 indices). */
  readonly span: readonly [number, number];
}

/** Text with the markup of recovered calls removed, those calls, and the lost ones. */
export interface Recovered {
  readonly text: string;
  readonly calls: readonly RecoveredCall[];
  /** Calls of the recovered blocks that could not be read, in text order. */
  readonly lost: readonly LostCall[];
}

/** Options of {@link recover} and {@link StreamRecoverer}. */
export interface RecoverOptions {
  /** Most calls recovered from one text. */
  maxCalls?: number;
}

function convert(found: native.Recovered): Recovered {
  return {
    text: found.text,
    calls: found.calls.map((c) => ({
      name: c.name,
      writtenName: c.writtenName ?? null,
      family: c.family,
      arguments: c.arguments,
      span: [c.start, c.end] as const,
    })),
    lost: found.lost.map((c) => ({
      name: c.name,
      family: c.family,
      text: c.text,
      position: c.position,
      span: [c.start, c.end] as const,
    })),
  };
}

/** Finds the tool calls written as text in `text`; only declared tools count. */
export function recover(text: string, tools: ToolsLike, options: RecoverOptions = {}): Recovered {
  const set = ToolSet.of(tools);
  return convert(call(() => native.recover(text, set.native, options.maxCalls)));
}

/**
 * Recovers calls from text that arrives in chunks. `feed(chunk)` returns the text safe to show
 * now (holding back only a suffix that could start a call) and the calls completed so far;
 * `finish()` the rest. One per stream of text.
 */
export class StreamRecoverer {
  #native: native.StreamRecoverer;

  constructor(tools: ToolsLike, options: RecoverOptions = {}) {
    const set = ToolSet.of(tools);
    this.#native = call(() => new native.StreamRecoverer(set.native, options.maxCalls));
  }

  /** Adds a chunk of text; returns what may be released now. */
  feed(chunk: string): Recovered {
    return convert(call(() => this.#native.feed(chunk)));
  }

  /** Ends the text; returns the rest. Throws when called twice. */
  finish(): Recovered {
    return convert(call(() => this.#native.finish()));
  }
}
