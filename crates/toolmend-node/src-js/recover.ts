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

/** Text with the markup of recovered calls removed, and those calls. */
export interface Recovered {
  readonly text: string;
  readonly calls: readonly RecoveredCall[];
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
