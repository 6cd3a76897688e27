/**
 * Typed errors: one class per kind, each with a stable `code`.
 *
 * Outcomes are values (a call that cannot be saved comes back `invalid`); only bad API input
 * and text that cannot be read as JSON throw.
 * @module
 */

/** Stable error codes, one per error class. */
export type ErrorCode =
  | 'TOOLMEND_INVALID_ARGUMENT'
  | 'TOOLMEND_TOOL_SPEC'
  | 'TOOLMEND_NO_JSON'
  | 'TOOLMEND_JSON_SYNTAX'
  | 'TOOLMEND_NON_FINITE'
  | 'TOOLMEND_TOO_LARGE'
  | 'TOOLMEND_TOO_DEEP';

/** Base class of every error toolmend throws. */
export class ToolmendError extends Error {
  /** A stable code, for `switch` and logs (messages may change). */
  readonly code: ErrorCode;

  constructor(message: string, code: ErrorCode = 'TOOLMEND_INVALID_ARGUMENT', options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An option or argument of the wrong kind or value (misuse of the API). */
export class InvalidArgumentError extends ToolmendError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'TOOLMEND_INVALID_ARGUMENT', options);
  }
}

/** A tool list or tool object toolmend cannot read. */
export class ToolSpecError extends ToolmendError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'TOOLMEND_TOOL_SPEC', options);
  }
}

/** Where a salvage failure happened; `position` is a UTF-16 index, as jsonrepair gives it. */
export interface SalvageErrorDetails {
  readonly position: number;
  readonly line: number;
  readonly column: number;
}

/**
 * A text that holds no JSON toolmend can read without guessing. Like npm jsonrepair's
 * `JSONRepairError`, it carries the `position` (a UTF-16 index into the text).
 */
export class SalvageError extends ToolmendError {
  /** Where reading stopped, as an index into the JavaScript string. */
  readonly position: number;
  /** 1-based line of `position`. */
  readonly line: number;
  /** Column of `position` in bytes of its line (0 before its first byte). */
  readonly column: number;

  constructor(message: string, code: ErrorCode, details: SalvageErrorDetails) {
    super(message, code);
    this.position = details.position;
    this.line = details.line;
    this.column = details.column;
  }
}

/** The text holds no JSON at all (prose, empty text). */
export class NoJsonError extends SalvageError {
  constructor(message: string, details: SalvageErrorDetails) {
    super(message, 'TOOLMEND_NO_JSON', details);
  }
}

/** The text looks like JSON but cannot be read even leniently without guessing. */
export class JsonSyntaxError extends SalvageError {
  constructor(message: string, details: SalvageErrorDetails) {
    super(message, 'TOOLMEND_JSON_SYNTAX', details);
  }
}

/** `NaN` or `Infinity` where a number is expected: JSON has no such value. */
export class NonFiniteError extends SalvageError {
  constructor(message: string, details: SalvageErrorDetails) {
    super(message, 'TOOLMEND_NON_FINITE', details);
  }
}

/** The text is over the size limit. */
export class TooLargeError extends SalvageError {
  constructor(message: string, details: SalvageErrorDetails) {
    super(message, 'TOOLMEND_TOO_LARGE', details);
  }
}

/** The nesting is over the depth limit. */
export class TooDeepError extends SalvageError {
  constructor(message: string, details: SalvageErrorDetails) {
    super(message, 'TOOLMEND_TOO_DEEP', details);
  }
}

/** npm jsonrepair's name for the error its `jsonrepair` throws (same `message`/`position`). */
export { SalvageError as JSONRepairError };

/** The error class for a native salvage failure's `kind`. */
export function salvageError(failure: {
  kind: string;
  message: string;
  position: number;
  line: number;
  column: number;
}): SalvageError {
  const details = { position: failure.position, line: failure.line, column: failure.column };
  switch (failure.kind) {
    case 'no_json':
      return new NoJsonError(failure.message, details);
    case 'non_finite':
      return new NonFiniteError(failure.message, details);
    case 'too_large':
      return new TooLargeError(failure.message, details);
    case 'too_deep':
      return new TooDeepError(failure.message, details);
    default:
      return new JsonSyntaxError(failure.message, details);
  }
}

/** Runs a native call, turning the addon's argument errors into `InvalidArgumentError`. */
export function native<T>(run: () => T, ErrorClass: new (message: string, options?: { cause?: unknown }) => ToolmendError = InvalidArgumentError): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof ToolmendError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ErrorClass(message, { cause: error });
  }
}
