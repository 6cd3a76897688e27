// The previous major, `ai` 5 (installed as `ai-v5`, pinned), with MockLanguageModelV2: the same
// hook and middleware work with its call shape (string finish reasons, LanguageModelV2 parts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai-v5';
import { MockLanguageModelV2, convertArrayToReadableStream } from 'ai-v5/test';
import { recoverToolCallsMiddleware, repairToolCall } from 'toolmend/ai-sdk';
import { z } from 'zod';

const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

function recordingTools() {
  const ran = [];
  const tools = {
    read_file: tool({
      inputSchema: z.strictObject({ path: z.string(), limit: z.int().optional(), offset: z.int().optional() }),
      execute: async (input) => { ran.push(['read_file', input]); return 'file text'; },
    }),
    write_file: tool({
      inputSchema: z.strictObject({ path: z.string(), content: z.string() }),
      execute: async (input) => { ran.push(['write_file', input]); return 'written'; },
    }),
  };
  return { ran, tools };
}

const generated = (content, finishReason = 'stop') => ({ content, finishReason, usage, warnings: [] });
const callPart = (toolName, input) => ({ type: 'tool-call', toolCallId: 'call-1', toolName, input });
const model = (first) => new MockLanguageModelV2({ doGenerate: [first, generated([{ type: 'text', text: 'done' }])] });
const streamed = (parts, finishReason = 'stop') => ({
  stream: convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, ...parts, { type: 'finish', finishReason, usage }]),
});
const textParts = (chunks) => [
  { type: 'text-start', id: 't1' },
  ...chunks.map((delta) => ({ type: 'text-delta', id: 't1', delta })),
  { type: 'text-end', id: 't1' },
];
const streamModel = (parts, finishReason) => new MockLanguageModelV2({ doStream: [streamed(parts, finishReason), streamed(textParts(['done']))] });

const BROKEN_READ = '{"file_path": "a.txt", "limit": "20", "offset": null}';
const CUT_WRITE = '{"path": "notes.md", "content": "# Notes\\n\\nThe first line and the sec';
const HERMES = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>';

describe('ai 5', () => {
  it('(1) the hook repairs file_path / "20" / null; without it nothing runs', async () => {
    for (const hook of [repairToolCall, undefined]) {
      const { ran, tools } = recordingTools();
      await generateText({
        model: model(generated([callPart('read_file', BROKEN_READ)], 'tool-calls')), tools, prompt: 'x',
        stopWhen: stepCountIs(3), ...(hook && { experimental_repairToolCall: hook }),
      });
      assert.deepEqual(ran, hook ? [['read_file', { path: 'a.txt', limit: 20 }]] : []);
    }
  });

  it('(1) streamText: the same repair', async () => {
    const { ran, tools } = recordingTools();
    const result = streamText({
      model: streamModel([callPart('read_file', BROKEN_READ)], 'tool-calls'), tools, prompt: 'x',
      stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall,
    });
    await result.consumeStream();
    assert.deepEqual(ran, [['read_file', { path: 'a.txt', limit: 20 }]]);
  });

  it('(2) a cut-off write never runs', async () => {
    const { ran, tools } = recordingTools();
    await generateText({
      model: model(generated([callPart('write_file', CUT_WRITE)], 'tool-calls')), tools, prompt: 'x',
      stopWhen: stepCountIs(3), experimental_repairToolCall: repairToolCall,
    });
    assert.deepEqual(ran, []);
  });

  it('(3) the middleware turns a Hermes call in text into a tool call; without it nothing runs', async () => {
    for (const withToolmend of [true, false]) {
      const { ran, tools } = recordingTools();
      const inner = model(generated([{ type: 'text', text: HERMES }]));
      const wrapped = withToolmend ? wrapLanguageModel({ model: inner, middleware: recoverToolCallsMiddleware() }) : inner;
      await generateText({ model: wrapped, tools, prompt: 'x', stopWhen: stepCountIs(3) });
      assert.deepEqual(ran, withToolmend ? [['read_file', { path: 'a.txt' }]] : []);
    }
  });

  it('(3) streamText: the same, from deltas', async () => {
    const { ran, tools } = recordingTools();
    const chunks = ['Let me look.\n<tool', '_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>'];
    const result = streamText({
      model: wrapLanguageModel({ model: streamModel(textParts(chunks)), middleware: recoverToolCallsMiddleware() }),
      tools, prompt: 'x', stopWhen: stepCountIs(3),
    });
    await result.consumeStream();
    assert.deepEqual(ran, [['read_file', { path: 'a.txt' }]]);
  });
});
