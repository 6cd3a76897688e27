// A consumer of the published types (dist/*.d.ts through the package's `exports`), checked by
// `tsc --noEmit` strict: the unions are closed, the results are typed, misuse does not compile.
import {
  type CallResult, type CallStatus, type LostCall, Mender, Session, StreamRecoverer, ToolSet, ToolmendError,
  jsonrepair, prepareTools, recover, salvageJson,
} from 'toolmend';
import { createRepairToolCall, recoverToolCallsMiddleware, repairToolCall, stormStop } from 'toolmend/ai-sdk';
import { repairInvalidToolCalls, toolmendMiddleware } from 'toolmend/langchain';
import { createAgent } from 'langchain';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const tools = ToolSet.fromOpenAI([{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }]);
const mender = new Mender(tools, { recover: 'content', model: 'qwen3' });
const call: CallResult = mender.repairCall('read', '{}');
const status: CallStatus = call.status;
switch (status) {
  case 'valid': case 'repaired': case 'recovered': case 'invalid': case 'suppressed': case 'unvalidated':
    break;
  default: {
    const never: never = status;
    throw new Error(never);
  }
}
const outcome: 'local-salvage' | 're-prompt' | 'gave-up' | null = call.outcome;
const error: string | null = call.error;
const text: string = jsonrepair('{a: 1}');
const turn = mender.runTurn(new Session({ threshold: 2 }), { content: 'hi', tool_calls: [] });
const calls: readonly CallResult[] = turn.calls;
const found = recover('x', tools).calls.map((c) => c.span[0] + c.span[1]);
const lost: readonly LostCall[] = recover('x', tools).lost;
const lostAt: number = lost.map((c) => c.position + c.span[0])[0] ?? 0;
const stream = new StreamRecoverer(tools);
stream.feed('a');
const prepared = prepareTools([{ name: 'a', parameters: { type: 'object' } }], { model: 'kimi-k2' });
const value = salvageJson('[1,', { truncation: 'close' }).value;
try { jsonrepair(''); } catch (e) { if (e instanceof ToolmendError) console.log(e.code); }

// @ts-expect-error: an unknown recover mode does not compile
new Mender(tools, { recover: 'sometimes' });

// The AI SDK accepts the hook, the middleware and the stop condition as typed.
const model = wrapLanguageModel({ model: new MockLanguageModelV3(), middleware: recoverToolCallsMiddleware() });
void generateText({
  model,
  tools: { read: tool({ inputSchema: z.object({ path: z.string() }), execute: async () => 'ok' }) },
  prompt: 'hi',
  experimental_repairToolCall: repairToolCall,
  stopWhen: [stepCountIs(5), stormStop()],
});
void generateText({ model, prompt: 'hi', experimental_repairToolCall: createRepairToolCall({ mender: { model: 'x' } }) });
void repairInvalidToolCalls;
void createAgent({ model: 'openai:gpt-4o', tools: [], middleware: [toolmendMiddleware()] });

export { outcome, error, text, calls, found, prepared, value };
