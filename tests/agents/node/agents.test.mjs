// The AI SDK (`ai` 6) agent loop — generateText / streamText with tools and
// `stopWhen: stepCountIs(n)` — over Chat Completions (@ai-sdk/openai-compatible) and Responses
// (@ai-sdk/openai), against the scripted model of ../mock_model.py, directly and through the
// real `toolmend serve` (TOOLMEND_BIN, default target/debug/toolmend). Each case must fail
// directly and succeed through toolmend; a cell in PENDING waits for a proxy fix and must
// still fail (so it breaks, on purpose, once the fix lands). Tools send cases.py's JSON
// Schema and validate the model's input with zod, as an AI SDK user's tools would.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..', '..');
const TOOLMEND_BIN = process.env.TOOLMEND_BIN ?? resolve(ROOT, 'target', 'debug', 'toolmend');
const PYTHON = process.env.PYTHON ?? 'python3';
const START_TIMEOUT_MS = 20_000;
const MAX_STEPS = 6;
// A whole agent run's limit, so a proxy that hangs fails its cell instead of stalling CI.
const RUN_TIMEOUT_MS = 60_000;
const VARIANTS = ['chat', 'chat-stream', 'responses', 'responses-stream'];
const CASE_NAMES = [
  'rename-int-literal', 'stringified-array', 'hermes-leak', 'hermes-two-turns',
  'strict-omit-rename', 'hermes-two-blocks', 'reprompt',
];
const FINAL_PREFIX = 'DONE: ';

// `${variant}/${case}` -> the proxy fix of issue #24 this cell waits for; it must still fail
// through toolmend, so the test breaks once the fix lands and the entry must go.
// None wait today (the streamed `reprompt` cells passed once `--reprompt` held streams too).
const PENDING = {};

// What the model's input must be, per tool (zod; the JSON Schema sent is cases.py's).
const VALIDATORS = {
  read_file: z.object({ path: z.string(), limit: z.number().int(), follow: z.boolean() }).strict(),
  read_many: z.object({ paths: z.array(z.string()), limit: z.number().int() }).strict(),
  read_text: z.object({
    path: z.string(), follow: z.boolean(), limit: z.number().int(), encoding: z.string().nullable(),
  }).strict(),
};

/** Keys sorted at every level, no spaces: Python's json.dumps(sort_keys=True, separators=(",", ":")). */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** cases.py's Case.succeeded. */
function succeeded(spec, toolName, finalText, invocations) {
  const got = invocations.map(canonical).sort();
  const want = spec.expected.map(canonical).sort();
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    return [false, `tool ran with ${JSON.stringify(got)}, expected ${JSON.stringify(want)}; final ${JSON.stringify(finalText)}`];
  }
  const text = finalText ?? '';
  if (!text.startsWith(FINAL_PREFIX)) return [false, `the run ended with ${JSON.stringify(text)}`];
  const missing = spec.expected.filter((args) => !text.includes(`ok ${toolName} ${canonical(args)}`));
  if (missing.length) return [false, `the final answer ${JSON.stringify(text)} lacks ${JSON.stringify(missing)}`];
  return [true, ''];
}

/** A child process whose first stdout or stderr line matching `pattern` is awaited. */
function startChild(argv, pattern, stream) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const ready = new Promise((resolveReady, rejectReady) => {
    const timer = setTimeout(() => rejectReady(new Error(`${argv.join(' ')}: not ready in ${START_TIMEOUT_MS} ms:\n${lines.join('\n')}`)), START_TIMEOUT_MS);
    for (const name of ['stdout', 'stderr']) {
      createInterface({ input: child[name] }).on('line', (line) => {
        lines.push(line);
        const match = name === stream && line.match(pattern);
        if (match) { clearTimeout(timer); resolveReady(match); }
      });
    }
    child.on('exit', (code) => { clearTimeout(timer); rejectReady(new Error(`${argv.join(' ')} exited ${code}:\n${lines.join('\n')}`)); });
  });
  return { child, ready, lines };
}

function stopChild({ child }) {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolveStop) => {
    child.on('exit', (code, signal) => resolveStop(code ?? signal));
    child.stdin.end();
    child.kill('SIGTERM');
  });
}

let model;
let cases;
const proxies = new Map(); // flags joined -> { child, url }

async function proxyFor(flags) {
  const key = flags.join(' ');
  if (!proxies.has(key)) {
    const proc = startChild(
      [TOOLMEND_BIN, 'serve', '--upstream', model.url, '--listen', '127.0.0.1:0', '--recover', 'content', ...flags],
      /^toolmend serve: listening on (http:\/\/127\.0\.0\.1:\d+)$/, 'stderr');
    proxies.set(key, proc);
    proc.url = (await proc.ready)[1];
  }
  const proc = proxies.get(key);
  return proc.url ?? (await proc.ready)[1];
}

async function runAgent(root, name, spec, variant) {
  const record = [];
  const toolName = spec.tool.name;
  const validator = VALIDATORS[toolName];
  const tools = {
    [toolName]: tool({
      description: spec.tool.description,
      inputSchema: jsonSchema(spec.tool.parameters, {
        validate: (value) => {
          const parsed = validator.safeParse(value);
          return parsed.success ? { success: true, value: parsed.data } : { success: false, error: parsed.error };
        },
      }),
      execute: async (input) => {
        record.push(input);
        return `ok ${toolName} ${canonical(input)}`;
      },
    }),
  };
  const languageModel = variant.startsWith('chat')
    ? createOpenAICompatible({ name: 'mock', baseURL: `${root}/v1`, apiKey: 'sk-mock' }).chatModel(name)
    : createOpenAI({ baseURL: `${root}/v1`, apiKey: 'sk-mock' }).responses(name);
  const options = { model: languageModel, tools, prompt: 'Read it.', stopWhen: stepCountIs(MAX_STEPS), maxRetries: 0,
    abortSignal: AbortSignal.timeout(RUN_TIMEOUT_MS) };
  let finalText;
  try {
    if (variant.endsWith('-stream')) {
      let failure;
      const result = streamText({ ...options, onError: ({ error }) => { failure = error; } });
      finalText = await result.text;
      if (failure) finalText = `error: ${failure}`;
    } else {
      finalText = (await generateText(options)).text;
    }
  } catch (error) { // the run stopping is an outcome the verdict judges
    finalText = `error: ${error}`;
  }
  return [finalText, record];
}

const OUTCOMES = [];

before(async () => {
  const proc = startChild([PYTHON, resolve(HERE, '..', 'mock_model.py')], /^(\{.*\})$/, 'stdout');
  const info = JSON.parse((await proc.ready)[1]);
  model = { ...proc, url: info.url };
  cases = info.cases;
  assert.deepEqual(Object.keys(cases).sort(), [...CASE_NAMES].sort(), 'cases.py and this file list the same cases');
});

after(async () => {
  const codes = [];
  // A proxy that never listened (refused its flags) has its own failing cells already.
  for (const proc of proxies.values()) if (proc.url) codes.push(await stopChild(proc));
  if (model) await stopChild(model);
  console.log('agents matrix (direct / through toolmend):');
  for (const line of OUTCOMES.sort()) console.log(`  ${line}`);
  assert.ok(codes.every((code) => code === 0), `toolmend serve exit codes on SIGTERM: ${codes}`);
});

for (const variant of VARIANTS) {
  describe(`ai-sdk ${variant}`, () => {
    for (const name of CASE_NAMES) {
      test(name, async () => {
        const spec = cases[name];
        const [directText, directRecord] = await runAgent(model.url, name, spec, variant);
        const [directOk, directWhy] = succeeded(spec, spec.tool.name, directText, directRecord);
        let ok;
        let why;
        try {
          const [text, record] = await runAgent(await proxyFor(spec.flags), name, spec, variant);
          [ok, why] = succeeded(spec, spec.tool.name, text, record);
        } catch (error) { // a proxy that does not start (a flag it lacks) fails the cell
          [ok, why] = [false, `${error.message}`];
        }
        OUTCOMES.push(`ai-sdk         ${variant.padEnd(18)} ${name.padEnd(20)} ${(directOk ? 'pass' : 'fail').padStart(5)} / ${ok ? 'pass' : 'fail'}`);
        assert.ok(!directOk, `succeeded without toolmend, so the case shows nothing: ${JSON.stringify(directRecord)} ${directWhy}`);
        const pending = PENDING[`${variant}/${name}`];
        if (pending) {
          assert.ok(!ok, `now passes through toolmend: drop ${variant}/${name} from PENDING (${pending})`);
        } else {
          assert.ok(ok, `through toolmend: ${why}`);
        }
      });
    }
  });
}
