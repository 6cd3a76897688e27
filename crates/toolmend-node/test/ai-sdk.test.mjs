// The real AI SDK (`ai` v6, pinned) with its mock language model: the repair hook and the
// middleware from `toolmend/ai-sdk`, through generateText and streamText, with tools whose
// `execute` records its input. The `without toolmend` cases show the same model fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { jsonrepair as npmJsonrepair } from 'jsonrepair';
import { z } from 'zod';
import { recoverToolCallsMiddleware, repairToolCall, stormStop } from 'toolmend/ai-sdk';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const stop = { unified: 'stop', raw: 'stop' };
const toolCallsFinish = { unified: 'tool-calls', raw: 'tool_calls' };

/** Tools whose execute records every input it runs with. */
function recordingTools() {
  const ran = [];
  const tools = {
    read_file: tool({
      description: 'Read a file.',
      // zod, as AI SDK apps write tools: the SDK validates the model's input against it.
      inputSchema: z.strictObject({ path: z.string(), limit: z.int().optional(), offset: z.int().optional() }),
      execute: async (input) => {
        ran.push(['read_file', input]);
        return 'file text';
      },
    }),
    write_file: tool({
      description: 'Write a file.',
      inputSchema: z.strictObject({ path: z.string(), content: z.string() }),
      execute: async (input) => {
        ran.push(['write_file', input]);
        return 'written';
      },
    }),
  };
  return { ran, tools };
}

const BROKEN_READ = '{"file_path": "a.txt", "limit": "20", "offset": null}';
const CUT_WRITE = '{"path": "notes.md", "content": "# Notes\\n\\nThe first line and the sec';
// ai 6 runs no tool of a step whose finish reason is `length`; OpenAI-compatible servers often
// report a cut call as `tool_calls` (or `stop`), and then the hook's verdict is what decides.
const cutFinish = toolCallsFinish;
const HERMES = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>';

function generated(content, finishReason = stop) {
  return { content, finishReason, usage, warnings: [] };
}

function callPart(toolName, input) {
  return { type: 'tool-call', toolCallId: 'call-1', toolName, input };
}

/** A model that answers with `first`, then with plain text. */
function generateModel(first) {
  return new MockLanguageModelV3({ doGenerate: [first, generated([{ type: 'text', text: 'done' }])] });
}

function streamed(parts, finishReason = stop) {
  return {
    stream: convertArrayToReadableStream([
      { type: 'stream-start', warnings: [] },
      ...parts,
      { type: 'finish', finishReason, usage },
    ]),
  };
}

function textParts(chunks) {
  return [
    { type: 'text-start', id: 't1' },
    ...chunks.map((delta) => ({ type: 'text-delta', id: 't1', delta })),
    { type: 'text-end', id: 't1' },
  ];
}

function streamModel(firstParts, finishReason) {
  return new MockLanguageModelV3({
    doStream: [streamed(firstParts, finishReason), streamed(textParts(['done']))],
  });
}

/** Every tool-error part of a run's steps. */
function toolErrors(result) {
  return result.steps.flatMap((s) => s.content.filter((p) => p.type === 'tool-error'));
}

/** Runs streamText to the end and returns what generateText's result would hold. */
async function runStream(options) {
  const result = streamText(options);
  await result.consumeStream();
  return { steps: await result.steps, text: await result.text };
}

describe('repair hook (experimental_repairToolCall)', () => {
  it('(1) generateText: a call with file_path / "20" / null runs once with repaired input', async () => {
    const { ran, tools } = recordingTools();
    const model = generateModel(generated([callPart('read_file', BROKEN_READ)], toolCallsFinish));
    const result = await generateText({
      model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall,
    });
    assert.deepEqual(ran, [['read_file', { path: 'a.txt', limit: 20 }]]);
    assert.equal(toolErrors(result).length, 0);
    assert.equal(result.text, 'done');
  });

  it('(1) without toolmend the same call never runs', async () => {
    const { ran, tools } = recordingTools();
    const model = generateModel(generated([callPart('read_file', BROKEN_READ)], toolCallsFinish));
    const result = await generateText({ model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3) });
    assert.deepEqual(ran, []);
    assert.equal(toolErrors(result).length, 1);
  });

  it('(1) streamText: the same repair', async () => {
    const { ran, tools } = recordingTools();
    const model = streamModel([callPart('read_file', BROKEN_READ)], toolCallsFinish);
    const result = await runStream({
      model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall,
    });
    assert.deepEqual(ran, [['read_file', { path: 'a.txt', limit: 20 }]]);
    assert.equal(result.text, 'done');
  });

  it('(2) a write_file call cut off inside content never runs; the SDK reports the error', async () => {
    const { ran, tools } = recordingTools();
    const model = generateModel(generated([callPart('write_file', CUT_WRITE)], cutFinish));
    const result = await generateText({
      model, tools, prompt: 'write notes', stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall,
    });
    assert.deepEqual(ran, []);
    const errors = toolErrors(result);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].toolName, 'write_file');
    // The error went back to the model in the next request.
    const next = JSON.stringify(model.doGenerateCalls[1].prompt);
    assert.match(next, /write_file/);
    assert.match(next, /error/i);
  });

  it('(2) streamText: the cut-off write never runs either', async () => {
    const { ran, tools } = recordingTools();
    const model = streamModel([callPart('write_file', CUT_WRITE)], cutFinish);
    const result = await runStream({
      model, tools, prompt: 'write notes', stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall,
    });
    assert.deepEqual(ran, []);
    assert.equal(toolErrors(result).length, 1);
  });

  it('(2) contrast: a hook built on npm jsonrepair closes the cut string and writes the truncated file', async () => {
    const { ran, tools } = recordingTools();
    const model = generateModel(generated([callPart('write_file', CUT_WRITE)], cutFinish));
    await generateText({
      model, tools, prompt: 'write notes', stopWhen: stepCountIs(3),
      experimental_repairToolCall: async ({ toolCall }) => ({ ...toolCall, input: npmJsonrepair(toolCall.input) }),
    });
    assert.deepEqual(ran, [['write_file', { path: 'notes.md', content: '# Notes\n\nThe first line and the sec' }]]);
  });

  it('repairs a misspelled tool name (NoSuchToolError)', async () => {
    const { ran, tools } = recordingTools();
    const model = generateModel(generated([callPart('Read_File', '{"path": "a.txt"}')], toolCallsFinish));
    await generateText({
      model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall,
    });
    assert.deepEqual(ran, [['read_file', { path: 'a.txt' }]]);
  });
});

describe('middleware (wrapLanguageModel): calls leaked into text', () => {
  it('(3) generateText: a Hermes <tool_call> in text becomes a tool call and the tool runs', async () => {
    const { ran, tools } = recordingTools();
    const model = wrapLanguageModel({
      model: generateModel(generated([{ type: 'text', text: HERMES }])),
      middleware: recoverToolCallsMiddleware(),
    });
    const result = await generateText({ model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3) });
    assert.deepEqual(ran, [['read_file', { path: 'a.txt' }]]);
    assert.equal(result.steps[0].text, 'Let me look.\n');
    assert.equal(result.text, 'done');
  });

  it('(3) without toolmend the markup stays text and nothing runs', async () => {
    const { ran, tools } = recordingTools();
    const model = generateModel(generated([{ type: 'text', text: HERMES }]));
    const result = await generateText({ model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3) });
    assert.deepEqual(ran, []);
    assert.match(result.text, /<tool_call>/);
  });

  it('(3) streamText: the markup split across deltas becomes a tool call; the prose streams', async () => {
    const { ran, tools } = recordingTools();
    const chunks = ['Let me look.\n<tool', '_call>\n{"name": "read_f', 'ile", "arguments": {"path": "a.txt"}}\n</tool_', 'call>'];
    const model = wrapLanguageModel({
      model: streamModel(textParts(chunks)),
      middleware: recoverToolCallsMiddleware(),
    });
    const deltas = [];
    const result = streamText({
      model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3),
      onChunk: ({ chunk }) => { if (chunk.type === 'text-delta') deltas.push(chunk.text); },
    });
    await result.consumeStream();
    assert.deepEqual(ran, [['read_file', { path: 'a.txt' }]]);
    assert.equal(deltas.join(''), 'Let me look.\ndone');
    assert.ok(!deltas.join('').includes('<tool'));
  });

  it('(3) streamText without toolmend: nothing runs', async () => {
    const { ran, tools } = recordingTools();
    const model = streamModel(textParts(['Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>']));
    const result = await runStream({ model, tools, prompt: 'read a.txt', stopWhen: stepCountIs(3) });
    assert.deepEqual(ran, []);
    assert.match(result.text, /<tool_call>/);
  });

  it('text without a call passes through unchanged', async () => {
    const { tools } = recordingTools();
    const text = 'Use <b>bold</b> and {"json": 1} freely.';
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ doGenerate: generated([{ type: 'text', text }]) }),
      middleware: recoverToolCallsMiddleware(),
    });
    const result = await generateText({ model, tools, prompt: 'hi' });
    assert.equal(result.text, text);
  });

  it('the middleware and the hook together: a leaked call with broken arguments runs repaired', async () => {
    const { ran, tools } = recordingTools();
    const leaked = '<tool_call>{"name": "read_file", "arguments": {"file_path": "a.txt", "limit": "20"}}</tool_call>';
    const model = wrapLanguageModel({
      model: generateModel(generated([{ type: 'text', text: leaked }])),
      middleware: recoverToolCallsMiddleware(),
    });
    await generateText({ model, tools, prompt: 'read', stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall });
    assert.deepEqual(ran, [['read_file', { path: 'a.txt', limit: 20 }]]);
  });
});

describe('stopWhen: stormStop()', () => {
  it('stops the loop when the model repeats the same call', async () => {
    const { ran, tools } = recordingTools();
    const same = generated([callPart('read_file', '{"path": "a.txt"}')], toolCallsFinish);
    const model = new MockLanguageModelV3({ doGenerate: async () => same });
    const result = await generateText({
      model, tools, prompt: 'read', stopWhen: [stepCountIs(10), stormStop()],
    });
    // The third identical call is the storm (threshold 3): the loop stops there.
    assert.equal(result.steps.length, 3);
    assert.equal(ran.length, 3);
  });

  it('without it the loop runs to the step limit', async () => {
    const { tools } = recordingTools();
    const same = generated([callPart('read_file', '{"path": "a.txt"}')], toolCallsFinish);
    const model = new MockLanguageModelV3({ doGenerate: async () => same });
    const result = await generateText({ model, tools, prompt: 'read', stopWhen: stepCountIs(10) });
    assert.equal(result.steps.length, 10);
  });
});
