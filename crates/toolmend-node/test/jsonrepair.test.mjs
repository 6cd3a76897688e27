// The npm jsonrepair-compatible function: signature, return conventions, the thrown error's
// `position`, documents of any root, and the listed refusals (README "jsonrepair compatibility").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { jsonrepair as npmJsonrepair } from 'jsonrepair';
import { JSONRepairError, JsonSyntaxError, NoJsonError, SalvageError, ToolmendError, jsonrepair, salvageJson } from 'toolmend';

describe('jsonrepair (npm-compatible)', () => {
  it('returns valid JSON as the same string, whitespace and all', () => {
    for (const text of ['{"a": 1,\n  "b": [1, 2]}', '[ ]', '"x"', '12.50', 'null', '  true ']) {
      assert.equal(jsonrepair(text), text);
    }
  });

  it('repairs documents of any root', () => {
    const cases = [
      ["{'a': None, b: True}", { a: null, b: true }],
      ['[1, 2, 3,', [1, 2, 3]],
      ["'quoted'", 'quoted'],
      ['{"a": 1} // comment', { a: 1 }],
      ['{"a":1}\n{"b":2}', [{ a: 1 }, { b: 2 }]],
      ['```json\n{"a": 1}\n```', { a: 1 }],
      ['{"text": "line one\nline two"}', { text: 'line one\nline two' }],
    ];
    for (const [text, value] of cases) {
      const out = jsonrepair(text);
      assert.deepEqual(JSON.parse(out), value, text);
      // npm jsonrepair reads these the same way.
      assert.deepEqual(JSON.parse(npmJsonrepair(text)), value, text);
    }
  });

  it('throws an error with a position (UTF-16 index), as jsonrepair does', () => {
    assert.throws(() => jsonrepair('{"a": ...}'), (e) => {
      assert.ok(e instanceof JSONRepairError && e instanceof SalvageError && e instanceof ToolmendError && e instanceof Error);
      assert.equal(typeof e.position, 'number');
      assert.match(e.message, / at position \d+$/);
      return true;
    });
    assert.throws(() => jsonrepair(''), NoJsonError);
    // After non-ASCII text the position counts UTF-16 units, so text.slice(position) works.
    const text = '{"ü𝄞": ...}';
    assert.throws(() => jsonrepair(text), (e) => e instanceof JsonSyntaxError && text.slice(e.position).startsWith('...'));
  });

  it('refuses to guess where jsonrepair guesses (listed in the README)', () => {
    for (const text of ['{"a": ...}', '{"a":}', '[1, 2, 3, ...]', '{"a": undefined}']) {
      assert.doesNotThrow(() => npmJsonrepair(text), text);
      assert.throws(() => jsonrepair(text), SalvageError, text);
    }
  });

  it('salvageJson gives the value, the repairs and whether the text was cut', () => {
    const out = salvageJson('{"a": [1, 2');
    assert.deepEqual(out.value, { a: [1, 2] });
    assert.equal(out.truncated, true);
    assert.ok(out.repairs.includes('truncation_closed'));
    assert.throws(() => salvageJson('{"a": [1, 2', { truncation: 'refuse' }), SalvageError);
    assert.deepEqual(salvageJson('[1]').repairs, []);
  });
});
