// The binding's API, mirroring the Python package's tests (crates/toolmend-py/tests/test_tools.py):
// ToolSet, Mender, CallResult, Session, recover, StreamRecoverer, prepareTools, errors.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import * as toolmend from 'toolmend';
import {
  InvalidArgumentError, Mender, Session, StreamRecoverer, ToolSet, ToolSpecError, ToolmendError,
  prepareTools, recover, repairKinds,
} from 'toolmend';
import { z } from 'zod';

const READ = {
  type: 'function',
  function: {
    name: 'read',
    description: 'Read a file',
    parameters: {
      type: 'object',
      required: ['path'],
      properties: { path: { type: 'string' }, limit: { type: 'integer' } },
      additionalProperties: false,
    },
  },
};
const ANTHROPIC_READ = { name: 'read', description: 'Read a file', input_schema: READ.function.parameters };
const MCP_READ = { name: 'read', description: 'Read a file', inputSchema: READ.function.parameters };
const tools = [READ];

describe('ToolSet', () => {
  it('reads every tool form', () => {
    const openai = ToolSet.fromOpenAI(tools);
    assert.deepEqual(openai.names, ['read']);
    assert.deepEqual(ToolSet.fromAnthropic([ANTHROPIC_READ]).names, ['read']);
    assert.deepEqual(ToolSet.fromMcp({ tools: [MCP_READ] }).names, ['read']);
    assert.deepEqual(ToolSet.fromMcp([MCP_READ]).names, ['read']);
    assert.equal(openai.size, 1);
    assert.ok(openai.has('read') && !openai.has('write'));
    assert.deepEqual(openai.rejected, []);
    assert.equal(openai.isMutating('read'), true); // undeclared counts as mutating
    assert.equal(openai.isMutating('nope'), undefined);
    assert.equal(ToolSet.fromMcp([{ ...MCP_READ, annotations: { readOnlyHint: true } }]).isMutating('read'), false);
  });

  it('reads AI SDK tool sets (JSON Schema, jsonSchema(), zod)', async () => {
    const { jsonSchema } = await import('ai');
    const set = ToolSet.fromAiSdk({
      plain: { inputSchema: READ.function.parameters },
      wrapped: { inputSchema: jsonSchema(READ.function.parameters) },
      zod: { inputSchema: z.object({ path: z.string() }) },
    });
    assert.deepEqual(set.names, ['plain', 'wrapped', 'zod']);
    assert.deepEqual(set.rejected, []);
    const mender = new Mender(set);
    assert.equal(mender.repairCall('zod', '{"file_path": "a"}').argumentsText, '{"path":"a"}');
  });

  it('refuses what is not a tool list; lists unreadable tools', () => {
    assert.throws(() => ToolSet.from({ name: 'not a list' }), ToolSpecError);
    assert.throws(() => ToolSet.from([{ a: 1n }]), (e) => e instanceof ToolSpecError && e.code === 'TOOLMEND_TOOL_SPEC');
    const bad = ToolSet.from([{ nope: 1 }, { name: 'ok', parameters: { type: 'object' } }]);
    assert.deepEqual(bad.names, ['ok']);
    assert.equal(bad.rejected.length, 1);
  });
});

describe('Mender.repairCall', () => {
  it('leaves a valid call untouched (same bytes)', () => {
    const raw = '{"path":  "a.txt"}';
    const call = new Mender(tools).repairCall('read', raw);
    assert.equal(call.status, 'valid');
    assert.equal(call.argumentsText, raw);
    assert.deepEqual(call.arguments, { path: 'a.txt' });
    assert.deepEqual(call.repairs, []);
    assert.equal(call.error, null);
    assert.equal(call.outcome, null);
    assert.ok(call.dispatchable);
  });

  it('builds a valid call\'s result as the full native result would read', async () => {
    // A call valid as given crosses back as `null`; its fields must equal what the binding
    // builds for the same call elsewhere (runTurn), with the caller's own strings.
    const mender = new Mender(tools);
    const raw = '{"path":  "a.txt"}';
    const [call, later] = [mender.repairCall('read', raw), await mender.repairCallAsync('read', raw)];
    const [full] = mender.runTurn(new Session(), {
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: raw } }],
    }).calls;
    for (const c of [call, later]) {
      assert.deepEqual({ ...c.toJSON(), id: 'c1' }, full.toJSON());
      assert.equal(c.id, '');
      assert.equal(c.nativeIndex, null);
      assert.equal(c.argumentsText, raw);
      assert.deepEqual(c.notes, []);
      assert.ok(c.dispatchable && !c.has('key_renamed'));
    }
  });

  it('reports each repair', () => {
    const call = new Mender(ToolSet.fromOpenAI(tools)).repairCall('read', '{"file_path": "/src/main.rs", "limit": null}');
    assert.equal(call.status, 'repaired');
    assert.equal(call.argumentsText, '{"path":"/src/main.rs"}');
    assert.deepEqual(call.arguments, { path: '/src/main.rs' });
    assert.ok(call.has('field_renamed') && call.has('null_stripped'));
    assert.equal(call.outcome, 'local-salvage');
    assert.equal(typeof call.repairs[0].path, 'string');
    assert.deepEqual(JSON.parse(JSON.stringify(call)).arguments, { path: '/src/main.rs' });
  });

  it('gives an invalid call a retry message instead of throwing', () => {
    const call = new Mender(tools).repairCall('read', '{"limit": 5}');
    assert.equal(call.status, 'invalid');
    assert.ok(!call.dispatchable);
    assert.deepEqual(call.arguments, { limit: 5 }); // parsed, but not valid
    assert.match(call.error, /`\/path` is required but missing/);
    assert.equal(call.outcome, 're-prompt');
  });

  it('never closes a cut-off call of a mutating tool', () => {
    const write = { name: 'write', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } };
    const call = new Mender([write]).repairCall('write', '{"path": "a", "content": "half a fi');
    assert.equal(call.status, 'invalid');
    assert.equal(call.arguments, null);
    assert.match(call.error, /cut off/);
  });

  it('checks its options', () => {
    assert.throws(() => new Mender(tools, { recover: 'sometimes' }), InvalidArgumentError);
    assert.throws(() => new Mender(tools, { nope: true }), (e) => e instanceof ToolmendError && e.code === 'TOOLMEND_INVALID_ARGUMENT');
    assert.ok(new Mender(tools, { recover: 'off', model: 'qwen3', maxDepth: 32 }));
  });

  it('counts calls', () => {
    const mender = new Mender(tools);
    mender.repairCall('read', '{"path": "a"}');
    mender.repairCall('read', '{"file_path": "a"}');
    assert.equal(mender.stats().calls, 2);
    assert.deepEqual(mender.tools.names, ['read']);
  });

  it('repairCallAsync gives the same result off the JS thread', async () => {
    const mender = new Mender(tools);
    const text = '{"file_path": "/src/main.rs", "limit": "20"}';
    const [sync, async] = [mender.repairCall('read', text), await mender.repairCallAsync('read', text)];
    assert.deepEqual(async.toJSON(), sync.toJSON());
  });
});

describe('Mender.runTurn and Session', () => {
  it('repairs native calls with the session', () => {
    const mender = new Mender(tools, { recover: 'content' });
    const result = mender.runTurn(new Session(), {
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: "{'path': 'x'}" } }],
    });
    assert.deepEqual(result.calls.map((c) => c.status), ['repaired']);
    assert.equal(result.calls[0].id, 'c1');
    assert.equal(result.calls[0].nativeIndex, 0);
    assert.deepEqual(result.calls[0].arguments, { path: 'x' });
    assert.equal(result.report.repaired, 1);
  });

  it('recovers calls from text', () => {
    const text = 'Reading.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.rs"}}\n</tool_call>';
    const result = new Mender(tools, { recover: 'content' }).runTurn(new Session(), { content: text });
    assert.deepEqual(result.calls.map((c) => c.status), ['recovered']);
    assert.equal(result.calls[0].origin, 'content');
    assert.equal(result.calls[0].nativeIndex, null);
    assert.ok(!(result.content ?? '').includes('tool_call'));
  });

  it('breaks a storm', () => {
    const mender = new Mender(tools);
    const session = new Session({ window: 8, threshold: 2 });
    const message = { tool_calls: [{ id: 'x', function: { name: 'read', arguments: '{"path": "a"}' } }] };
    const statuses = [0, 1, 2].map(() => mender.runTurn(session, message).calls[0].status);
    assert.equal(statuses[0], 'valid');
    assert.ok(statuses.includes('suppressed'));
    session.newUserTurn();
    assert.throws(() => mender.runTurn(session, { tool_calls: [{ function: {} }] }), InvalidArgumentError);
  });
});

describe('recover and StreamRecoverer', () => {
  const text = 'Sure. ☕𝄞\n<tool_call>\n{"name": "read", "arguments": {"path": "a.rs"}}\n</tool_call>\nDone.';

  it('finds calls in text, with UTF-16 spans', () => {
    const found = recover(text, tools);
    assert.deepEqual(found.calls.map((c) => c.name), ['read']);
    assert.deepEqual(JSON.parse(found.calls[0].arguments), { path: 'a.rs' });
    assert.equal(found.calls[0].family, 'hermes');
    assert.ok(!found.text.includes('tool_call') && found.text.startsWith('Sure.'));
    const [start, end] = found.calls[0].span;
    assert.ok(text.slice(start, end).startsWith('<tool_call>'));
    assert.ok(text.slice(start, end).endsWith('</tool_call>'));
  });

  it('streams: the same text and calls from chunks', () => {
    const found = recover(text, tools);
    const stream = new StreamRecoverer(ToolSet.from(tools));
    let released = '';
    const calls = [];
    for (let i = 0; i < text.length; i += 7) {
      const out = stream.feed(text.slice(i, i + 7));
      released += out.text;
      calls.push(...out.calls);
    }
    const out = stream.finish();
    released += out.text;
    calls.push(...out.calls);
    assert.equal(released, found.text);
    assert.deepEqual(calls.map((c) => c.name), ['read']);
    assert.deepEqual(calls[0].span, found.calls[0].span);
    assert.throws(() => stream.finish(), ToolmendError);
    assert.throws(() => stream.feed('more'), ToolmendError);
  });

  // A Cohere action list whose second entry cannot be read (its parameters are a string).
  const lostEntry = '{"tool_name": "read", "parameters": "a.rs"}';
  const actions = `☕ <|START_ACTION|>[{"tool_name": "read", "parameters": {"path": "a"}}, ${lostEntry}, `
    + '{"tool_name": "read", "parameters": {"path": "b"}}]<|END_ACTION|>';

  it('lists an unreadable list entry as lost, in its place', () => {
    const found = recover(actions, tools);
    assert.deepEqual(found.calls.map((c) => JSON.parse(c.arguments)), [{ path: 'a' }, { path: 'b' }]);
    assert.deepEqual(found.lost, [
      { name: 'read', family: 'cohere', text: lostEntry, position: 1, span: found.calls[0].span },
    ]);
    assert.ok(actions.slice(...found.lost[0].span).startsWith('<|START_ACTION|>'));
    assert.deepEqual(recover(text, tools).lost, []);
  });

  for (const size of [1, 7, 64, 10_000]) {
    it(`streams a lost entry once, in its place (chunks of ${size})`, () => {
      const stream = new StreamRecoverer(tools);
      const lost = [];
      for (let i = 0; i < actions.length; i += size) lost.push(...stream.feed(actions.slice(i, i + size)).lost);
      lost.push(...stream.finish().lost);
      assert.deepEqual(lost, recover(actions, tools).lost);
    });
  }
});

describe('prepareTools', () => {
  it('rewrites tools for a model, in the form given', () => {
    const patternTool = {
      type: 'function',
      function: { name: 'grep', parameters: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } } } },
    };
    const prepared = prepareTools([patternTool], { model: 'kimi-k2' });
    assert.equal(prepared[0].function.parameters.properties.id.pattern, '[a-z]+');
    const kept = prepareTools([patternTool], { model: 'kimi-k2', stripAnchors: false });
    assert.equal(kept[0].function.parameters.properties.id.pattern, '^[a-z]+$');
    assert.throws(() => prepareTools(tools, { nope: true }), InvalidArgumentError);
  });
});

describe('package', () => {
  it('lists the repair kinds and its version', () => {
    const kinds = repairKinds();
    assert.ok(kinds.includes('field_renamed') && kinds.includes('truncation_closed'));
    assert.match(toolmend.engineVersion, /^\d+\.\d+\.\d+/);
  });

  it('CommonJS and ESM give the same classes', () => {
    const require = createRequire(import.meta.url);
    const cjs = require('toolmend');
    assert.equal(cjs.Mender, Mender);
    assert.equal(cjs.ToolmendError, ToolmendError);
    assert.equal(typeof require('toolmend/ai-sdk').repairToolCall, 'function');
  });
});
