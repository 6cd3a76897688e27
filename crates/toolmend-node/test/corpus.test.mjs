// The bundled corpus (corpus/*.jsonl, the cases `toolmend eval` runs) through the Node package:
// every case's expectation holds here too, so Node gives the Rust library's outcomes. The
// checks follow corpus/README.md; sessions are per file, as in `toolmend turns`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Mender, Session } from 'toolmend';

const corpus = fileURLToPath(new URL('../../../corpus/', import.meta.url));

/** JSON values equal, object key order ignored. */
function sameValue(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameValue(a[k], b[k]));
  }
  return a === b;
}

/** `kind@path` or `kind` patterns, each matching a different actual repair, same count. */
function repairsMatch(expected, actual) {
  if (expected.length !== actual.length) return false;
  const left = [...actual];
  for (const pattern of expected) {
    const [kind, at] = pattern.split('@');
    const i = left.findIndex((r) => r.kind === kind && (at === undefined || r.path === at));
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

function check(c, turn) {
  const want = c.expect;
  assert.equal(turn.calls.length, want.calls.length, 'number of calls');
  want.calls.forEach((w, i) => {
    const got = turn.calls[i];
    assert.equal(got.name, w.name, `calls[${i}].name`);
    assert.equal(got.status, w.status, `calls[${i}].status`);
    if ('arguments' in w) assert.ok(sameValue(got.arguments, w.arguments), `calls[${i}].arguments: ${JSON.stringify(got.arguments)}`);
    if ('arguments_text' in w) assert.equal(got.argumentsText, w.arguments_text, `calls[${i}].arguments_text`);
    if ('repairs' in w) assert.ok(repairsMatch(w.repairs, got.repairs), `calls[${i}].repairs: ${JSON.stringify(got.repairs)}`);
    for (const part of w.error_contains ?? []) assert.ok((got.error ?? '').includes(part), `calls[${i}].error contains ${part}`);
    if ('origin' in w) assert.equal(got.origin, w.origin, `calls[${i}].origin`);
    if ('outcome' in w) assert.equal(got.outcome, w.outcome, `calls[${i}].outcome`);
  });
  if ('content' in want) assert.equal(turn.content ?? '', want.content ?? '', 'content');
  for (const [key, value] of Object.entries(want.report ?? {})) assert.equal(turn.report[key], value, `report.${key}`);
}

const files = fs.readdirSync(corpus).filter((f) => f.endsWith('.jsonl')).sort();

describe('corpus replay through the Node package', () => {
  for (const file of files) {
    it(file, () => {
      const sessions = new Map();
      const lines = fs.readFileSync(path.join(corpus, file), 'utf8').split('\n').filter((l) => l.trim() !== '');
      const failures = [];
      for (const line of lines) {
        const c = JSON.parse(line);
        const options = c.options ?? {};
        const maxReprompts = options.max_reprompts ?? 1;
        const mender = new Mender(c.tools, { ...(options.recover && { recover: options.recover }), model: c.model ?? '' });
        let session;
        if (c.session === undefined) {
          session = new Session({ maxReprompts });
        } else {
          session = sessions.get(c.session) ?? new Session({ maxReprompts });
          sessions.set(c.session, session);
          session.setMaxReprompts(maxReprompts);
        }
        const turn = mender.runTurn(session, c.message, {
          ...(c.finish_reason != null && { finishReason: c.finish_reason }),
          ...(c.new_user_turn && { newUserTurn: true }),
        });
        try {
          check(c, turn);
        } catch (error) {
          failures.push(`${c.id}: ${error.message.split('\n')[0]}`);
        }
      }
      assert.deepEqual(failures, [], `${failures.length} of ${lines.length} cases differ`);
    });
  }
});
