// LangChain.js (@langchain/core, pinned): a fake chat model emits a broken tool call; the tool
// runs with repaired arguments after `toolRepair`, and does not run without it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { repairInvalidToolCalls, toolRepair } from 'toolmend/langchain';
import { z } from 'zod';

/** A chat model that answers every prompt with the OpenAI-style tool calls it was given. */
class FakeToolCallingModel extends BaseChatModel {
  constructor(rawToolCalls) {
    super({});
    this.rawToolCalls = rawToolCalls;
  }

  _llmType() {
    return 'fake-tool-calling';
  }

  async _generate() {
    // LangChain's own parser splits these into tool_calls and invalid_tool_calls.
    const message = new AIMessage({ content: '', additional_kwargs: { tool_calls: this.rawToolCalls } });
    return { generations: [{ text: '', message }] };
  }
}

function recordingTool() {
  const ran = [];
  const readFile = tool(async (input) => {
    ran.push(input);
    return 'file text';
  }, {
    name: 'read_file',
    description: 'Read a file.',
    schema: z.strictObject({ path: z.string(), limit: z.int().optional() }),
  });
  return { ran, readFile };
}

/** One agent step: call the model, run each tool call it made. */
async function agentStep(runnable, tools) {
  const message = await runnable.invoke('read a.txt');
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const results = [];
  for (const call of message.tool_calls ?? []) {
    try {
      results.push(await byName[call.name].invoke({ ...call, type: 'tool_call' }));
    } catch (error) {
      results.push(error);
    }
  }
  return { message, results };
}

const PYTHON_QUOTES = { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: "{'file_path': 'a.txt', 'limit': '20'}" } };
const WRONG_KEYS = { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"file_path": "a.txt", "limit": "20"}' } };

describe('toolmend/langchain', () => {
  it('an invalid_tool_calls entry becomes a tool call that runs with repaired args', async () => {
    const { ran, readFile } = recordingTool();
    const model = new FakeToolCallingModel([PYTHON_QUOTES]);
    const { message } = await agentStep(model.pipe(toolRepair([readFile])), [readFile]);
    assert.deepEqual(ran, [{ path: 'a.txt', limit: 20 }]);
    assert.deepEqual(message.invalid_tool_calls, []);
    assert.equal(message.tool_calls[0].id, 'call_1');
  });

  it('without toolmend the call stays invalid and the tool never runs', async () => {
    const { ran, readFile } = recordingTool();
    const { message } = await agentStep(new FakeToolCallingModel([PYTHON_QUOTES]), [readFile]);
    assert.deepEqual(ran, []);
    assert.equal(message.invalid_tool_calls.length, 1);
  });

  it('a parsed call with the wrong keys and types is repaired against the schema', async () => {
    const { ran, readFile } = recordingTool();
    await agentStep(new FakeToolCallingModel([WRONG_KEYS]).pipe(toolRepair([readFile])), [readFile]);
    assert.deepEqual(ran, [{ path: 'a.txt', limit: 20 }]);
  });

  it('without toolmend the wrong keys fail the tool schema', async () => {
    const { ran, readFile } = recordingTool();
    const { results } = await agentStep(new FakeToolCallingModel([WRONG_KEYS]), [readFile]);
    assert.deepEqual(ran, []);
    assert.ok(results[0] instanceof Error);
  });

  it('a cut-off call stays invalid with toolmend\'s message; a valid message is returned as is', () => {
    const { readFile } = recordingTool();
    const cut = new AIMessage({
      content: '',
      additional_kwargs: { tool_calls: [{ id: 'c', type: 'function', function: { name: 'read_file', arguments: '{"path": "a.t' } }] },
    });
    const out = repairInvalidToolCalls(cut, [readFile]);
    assert.deepEqual(out.tool_calls, []);
    assert.match(out.invalid_tool_calls[0].error, /cut off/);
    const fine = new AIMessage({ content: 'hi', tool_calls: [{ name: 'read_file', args: { path: 'a' }, id: 'x' }] });
    assert.equal(repairInvalidToolCalls(fine, [readFile]), fine);
  });
});

describe('toolmendMiddleware (LangChain v1 createAgent)', async () => {
  const { createAgent, FakeToolCallingModel: LangChainFake } = await import('langchain');
  const { toolmendMiddleware } = await import('toolmend/langchain');

  /** Our fake model, bindable as createAgent needs. */
  class BindableFake extends FakeToolCallingModel {
    constructor(rawToolCalls) {
      super(rawToolCalls);
      this.turn = 0;
    }

    bindTools() {
      return this;
    }

    async _generate() {
      // The broken call first, then a plain answer.
      this.turn += 1;
      if (this.turn > 1) return { generations: [{ text: 'done', message: new AIMessage('done') }] };
      return super._generate();
    }
  }

  it('the agent runs the tool with repaired arguments (wrong keys and types)', async () => {
    const { ran, readFile } = recordingTool();
    const model = new LangChainFake({ toolCalls: [[{ name: 'read_file', args: { file_path: 'a.txt', limit: '20' }, id: '1' }], []] });
    const agent = createAgent({ model, tools: [readFile], middleware: [toolmendMiddleware()] });
    await agent.invoke({ messages: [{ role: 'user', content: 'read a.txt' }] });
    assert.deepEqual(ran, [{ path: 'a.txt', limit: 20 }]);
  });

  it('without it the agent reports the schema error and the tool never runs', async () => {
    const { ran, readFile } = recordingTool();
    const model = new LangChainFake({ toolCalls: [[{ name: 'read_file', args: { file_path: 'a.txt', limit: '20' }, id: '1' }], []] });
    const agent = createAgent({ model, tools: [readFile] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'read a.txt' }] }).catch((e) => e);
    assert.deepEqual(ran, []);
    assert.ok(result instanceof Error || result.messages.some((m) => m.type === 'tool' && m.status === 'error'));
  });

  it('the agent runs a call from invalid_tool_calls', async () => {
    const { ran, readFile } = recordingTool();
    const agent = createAgent({ model: new BindableFake([PYTHON_QUOTES]), tools: [readFile], middleware: [toolmendMiddleware()] });
    await agent.invoke({ messages: [{ role: 'user', content: 'read a.txt' }] });
    assert.deepEqual(ran, [{ path: 'a.txt', limit: 20 }]);
  });
});
