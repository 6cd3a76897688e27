// The README's Node example: run with `node examples/quickstart.mjs` after building the package.
import { Mender, Session, ToolSet, jsonrepair, recover } from 'toolmend';

const tools = ToolSet.fromOpenAI([
  {
    type: 'function',
    function: {
      name: 'read_file',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
        required: ['path'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
    },
  },
]);
const mender = new Mender(tools);

// A wrong key, a number as a string, a null: repaired, and only those.
const call = mender.repairCall('read_file', '{"file_path": "src/main.rs", "limit": "20", "offset": null}');
console.log(call.status, call.argumentsText, call.repairs.map((r) => r.kind));
// repaired {"path":"src/main.rs","limit":20} [ 'field_renamed', 'scalar_coerced', 'null_stripped' ]

// A write cut off by max_tokens is never closed: the model gets a retry message instead.
const cut = mender.repairCall('write_file', '{"path": "notes.md", "content": "# Notes\\n\\nThe first li');
console.log(cut.status, cut.outcome);
// invalid re-prompt

// A call the model wrote as text.
const found = recover('Let me look.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>', tools);
console.log(found.text, found.calls.map((c) => [c.name, c.arguments]));
// Let me look.
//  [ [ 'read_file', '{"path": "a.txt"}' ] ]

// One assistant message with a session (storm breaker, retry budget).
const turn = mender.runTurn(new Session(), {
  content: null,
  tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: "{'path': 'x'}" } }],
});
console.log(turn.calls.map((c) => [c.status, c.argumentsText]), turn.report.repaired);
// [ [ 'repaired', '{"path":"x"}' ] ] 1

// npm jsonrepair's signature: any JSON document, a string back, an error with a position.
console.log(jsonrepair("{name: 'Ada', tags: ['x', 'y',"));
// {"name":"Ada","tags":["x","y"]}
