/**
 * `Mender` (the repair pipeline over a tool set), `Session` (one agent run's storm window and
 * retry budget) and the results they return.
 * @module
 */
import * as native from './native.js';
import { InvalidArgumentError, native as call } from './errors.js';
import { ToolSet, type ToolsLike } from './tools.js';

/** How a call ended. */
export type CallStatus = 'valid' | 'repaired' | 'recovered' | 'invalid' | 'suppressed' | 'unvalidated';

/** What happened to a call that was not valid as sent. */
export type CallOutcome = 'local-salvage' | 're-prompt' | 'gave-up';

/** Where a call came from: the native `tool_calls`, or text of the content or reasoning. */
export type CallOrigin = 'native' | 'content' | 'reasoning';

/** What `recover` does with calls leaked into text: `off`, `strip` (remove markup), `content`, `all`. */
export type RecoverMode = 'off' | 'strip' | 'content' | 'all';

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One repair: its kind (e.g. `key_renamed`, `string_to_integer`) and the JSON Pointer it changed. */
export interface Repair {
  readonly kind: string;
  readonly path: string;
}

/** The repairs and notes of every call valid as given: one frozen empty array each, shared. */
const NO_REPAIRS: readonly Repair[] = Object.freeze([]);
const NO_NOTES: readonly string[] = Object.freeze([]);

/** Everything toolmend decided about one call. */
export class CallResult {
  /** The call id (generated for calls recovered from text). */
  readonly id: string;
  /** The tool name, after any name repair. */
  readonly name: string;
  /** Where the call came from. */
  readonly origin: CallOrigin;
  /** How it ended. */
  readonly status: CallStatus;
  /** The text to dispatch: the input bytes when valid, compact JSON when repaired, the input when invalid. */
  readonly argumentsText: string;
  /** Every repair, in order. */
  readonly repairs: readonly Repair[];
  /** Value-free notes for the model, to prepend to the tool result. */
  readonly notes: readonly string[];
  /** The retry or guard message for `invalid` and `suppressed` calls, else `null`. */
  readonly error: string | null;
  /** The outcome label for repaired and rejected calls, else `null`. */
  readonly outcome: CallOutcome | null;
  /** For a native call in `runTurn`: its index in the message's `tool_calls`. */
  readonly nativeIndex: number | null;
  #raw: native.Call | null;
  #arguments: JsonValue | undefined;

  /**
   * @internal `raw`: the binding's result, `null` for a call valid as given (its status
   * `valid`, name `name`, text `input`: nothing of it crosses back from Rust); `input`: the
   * argument text given, a valid call's text.
   */
  constructor(raw: native.Call | null, input?: string, name?: string) {
    this.#raw = raw;
    if (raw === null) {
      // The fields in the same order as below: one object shape for every result.
      this.id = '';
      this.name = name ?? '';
      this.origin = 'native';
      this.status = 'valid';
      this.argumentsText = input ?? '';
      this.repairs = NO_REPAIRS;
      this.notes = NO_NOTES;
      this.error = null;
      this.outcome = null;
      this.nativeIndex = null;
      return;
    }
    this.id = raw.id;
    this.name = raw.name;
    this.origin = raw.origin as CallOrigin;
    this.status = raw.status as CallStatus;
    this.argumentsText = raw.argumentsText ?? input ?? '';
    this.repairs = raw.repairs;
    this.notes = raw.notes;
    this.error = raw.error ?? null;
    this.outcome = (raw.outcome ?? null) as CallOutcome | null;
    this.nativeIndex = raw.nativeIndex ?? null;
  }

  /** The final arguments as a value (parsed on first read); `null` when there are none. */
  get arguments(): JsonValue {
    if (this.#arguments === undefined) {
      const raw = this.#raw;
      this.#arguments =
        raw === null
          ? (JSON.parse(this.argumentsText) as JsonValue)
          : !raw.hasArguments
            ? null
            : (JSON.parse(raw.argumentsJson ?? this.argumentsText) as JsonValue);
    }
    return this.#arguments;
  }

  /** Whether the call may be dispatched (`valid`, `repaired` or `recovered`). */
  get dispatchable(): boolean {
    return this.status === 'valid' || this.status === 'repaired' || this.status === 'recovered';
  }

  /** Whether a repair of `kind` was made. */
  has(kind: string): boolean {
    return this.repairs.some((r) => r.kind === kind);
  }

  /** A plain object (for logs and `JSON.stringify`). */
  toJSON(): Record<string, unknown> {
    return {
      id: this.id,
      name: this.name,
      origin: this.origin,
      status: this.status,
      arguments: this.arguments,
      argumentsText: this.argumentsText,
      repairs: this.repairs,
      notes: this.notes,
      error: this.error,
      outcome: this.outcome,
    };
  }
}

/** Options of {@link Session}. */
export interface SessionOptions {
  /** Calls the storm breaker looks back over (default 6). */
  window?: number;
  /** The `threshold`th identical call within `window` is suppressed (default 3). */
  threshold?: number;
  /** Retries allowed per invalid call, 0 to 5 (default 1). */
  maxReprompts?: number;
}

/** One agent run's storm window and retry budget, shared by its turns. */
export class Session {
  /** @internal */
  readonly native: native.Session;

  constructor(options: SessionOptions = {}) {
    this.native = call(() => new native.Session(options.window, options.threshold, options.maxReprompts));
  }

  /** Changes the retry budget from now on (0 to 5); the failures counted so far are kept. */
  setMaxReprompts(maxReprompts: number): void {
    call(() => this.native.setMaxReprompts(maxReprompts));
  }

  /** A new user message: the storm window starts afresh (the retry budget does not). */
  newUserTurn(): void {
    this.native.newUserTurn();
  }
}

/** Options of {@link Mender}; each defaults to the library's. */
export interface MenderOptions {
  /** What to do with calls leaked into text (default `content`). */
  recover?: RecoverMode;
  /** The model name (chooses model-specific readings). */
  model?: string;
  /** Put argument values in notes and errors (default: value-free messages). */
  includeValues?: boolean;
  maxSalvageBytes?: number;
  maxDepth?: number;
  maxRecoveredCalls?: number;
  maxRepairRounds?: number;
  maxMessageBytes?: number;
  maxCallKeyMatches?: number;
  maxCallErrors?: number;
}

/** An OpenAI-style assistant message, the input of {@link Mender.runTurn}. */
export interface AssistantMessage {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: ReadonlyArray<{
    id?: string;
    type?: 'function';
    function: { name: string; arguments?: string | JsonValue };
  }> | null;
}

/** Options of {@link Mender.runTurn}. */
export interface RunTurnOptions {
  /** The message's finish reason (`length` marks a cut-off turn). */
  finishReason?: string;
  /** This turn answers a new user message (the storm window starts afresh). */
  newUserTurn?: boolean;
}

/** What {@link Mender.runTurn} made of one assistant message. */
export interface TurnResult {
  /** The content with recovered (or stripped) markup removed. */
  readonly content: string | null;
  /** The reasoning with recovered markup removed. */
  readonly reasoning: string | null;
  /** Every call: native calls first, then calls recovered from text, in order. */
  readonly calls: readonly CallResult[];
  /** Counts for the turn (`repaired`, `invalid`, `scavenged`, `storms_broken`, …). */
  readonly report: Readonly<Record<string, number>>;
}

const OPTION_NAMES = new Set([
  'recover', 'model', 'includeValues', 'maxSalvageBytes', 'maxDepth', 'maxRecoveredCalls',
  'maxRepairRounds', 'maxMessageBytes', 'maxCallKeyMatches', 'maxCallErrors',
]);

/**
 * The repair pipeline over a set of tools. Build one per tool set and reuse it: every method
 * is synchronous microsecond work (`repairCallAsync` moves a large call off the JS thread).
 */
export class Mender {
  /** @internal */
  readonly native: native.Mender;
  /** The tools this mender validates against. */
  readonly tools: ToolSet;

  constructor(tools: ToolsLike, options: MenderOptions = {}) {
    for (const key of Object.keys(options)) {
      if (!OPTION_NAMES.has(key)) throw new InvalidArgumentError(`unknown Mender option ${JSON.stringify(key)}`);
    }
    this.tools = ToolSet.of(tools);
    this.native = call(() => new native.Mender(this.tools.native, options));
  }

  /**
   * Validates one call's raw argument text against its tool's schema and repairs only what
   * failed. Never throws for a broken call: it comes back `invalid` with `error` set.
   */
  repairCall(name: string, argumentsText: string): CallResult {
    return new CallResult(this.native.repairCall(name, argumentsText), argumentsText, name);
  }

  /** {@link Mender.repairCall} on the libuv thread pool (worth it only for large texts). */
  async repairCallAsync(name: string, argumentsText: string): Promise<CallResult> {
    return new CallResult(await this.native.repairCallAsync(name, argumentsText), argumentsText, name);
  }

  /** Runs one assistant message through every stage with the session's state. */
  runTurn(session: Session, message: AssistantMessage, options: RunTurnOptions = {}): TurnResult {
    const turn = call(() =>
      this.native.runTurn(session.native, JSON.stringify(message), options.finishReason, options.newUserTurn),
    );
    return {
      content: turn.content ?? null,
      reasoning: turn.reasoning ?? null,
      calls: turn.calls.map((c) => new CallResult(c)),
      report: JSON.parse(turn.reportJson) as Record<string, number>,
    };
  }

  /** Counters since the mender was built: calls, invalid, recovered, storms, repairs per kind. */
  stats(): Record<string, unknown> {
    return JSON.parse(this.native.statsJson()) as Record<string, unknown>;
  }
}
