/**
 * The npm `jsonrepair`-compatible surface: `jsonrepair(text): string`, throwing an error with a
 * `position` (a UTF-16 index) when the text cannot be repaired, for documents of any root.
 *
 * Built on the same document reading the Python package's json_repair drop-in uses. Valid JSON
 * comes back as the same string; repaired JSON comes back compact. Where jsonrepair guesses and
 * toolmend refuses (prose as a value, `...`, a missing value) this throws: see the README's
 * "jsonrepair compatibility" list.
 * @module
 */
import * as native from './native.js';
import { salvageError, native as call } from './errors.js';
import type { JsonValue } from './mender.js';

/** Options of {@link salvageJson}. */
export interface SalvageJsonOptions {
  /** `close` (keep what was read and close what is open, the default) or `refuse`. */
  truncation?: 'close' | 'refuse';
  /** Text longer than this many bytes is refused (default 64 MiB). */
  maxBytes?: number;
  /** Nesting deeper than this is refused. */
  maxDepth?: number;
  /** Drop raw line breaks right before a string's closing quote (default off). */
  trimLayout?: boolean;
  /** Read Python and bare-token spellings that name one value, `.25`, `None`, `{a: b}` (default on). */
  lenientScalars?: boolean;
  /** A string the text ends inside loses its trailing blanks (default off). */
  trimCutStrings?: boolean;
}

/** What {@link salvageJson} made of a text. */
export interface Salvaged {
  /** The value (several values back to back become one array). */
  readonly value: JsonValue;
  /** The repair kinds used, each once; empty for strict JSON. */
  readonly repairs: readonly string[];
  /** The text ended inside the document, which was closed. */
  readonly truncated: boolean;
  /** The value as JSON text: the input itself when it was strict JSON. */
  readonly text: string;
}

/**
 * Repairs a JSON document (any root) and returns it as JSON text; drop-in for npm
 * `jsonrepair`. Throws a {@link SalvageError} (alias `JSONRepairError`) with `position`.
 */
export function jsonrepair(text: string): string {
  const result = native.repairDocument(text);
  if (result.error) throw salvageError(result.error);
  return result.text ?? text;
}

/** Reads a JSON document of any root leniently; throws a {@link SalvageError} when it cannot. */
export function salvageJson(text: string, options: SalvageJsonOptions = {}): Salvaged {
  // No JSON.parse attempt first: on malformed text its SyntaxError costs more than the whole
  // repair of a small call (bench/node). Strict JSON comes back without its text (`text`
  // absent) and is parsed here once.
  const result = call(() => native.repairDocument(text, options));
  if (result.error) throw salvageError(result.error);
  const out = result.text ?? text;
  return { value: JSON.parse(out) as JsonValue, repairs: result.repairs, truncated: result.truncated, text: out };
}
