"""The drop-in's answers as one hash, to prove a speed change left them alone (issue #31).

    python bench/python/dropin_digest.py CORPUS.jsonl [MORE.txt ...]

For every input of a `make_corpus.py` corpus (every size and variant), every line of the
optional text files (each line a JSON string literal holding one input, e.g. the inputs of
json_repair's suite) and a built-in list of edge cases, it calls `toolmend.loads` and
`toolmend.repair_json` in the ways json_repair's users call them (defaults, `stream_stable`,
`return_objects`, `skip_json_loads`, `ensure_ascii=False`) and hashes each answer with its
exact types (`int` vs `float` vs `bool`, dict order), or the exception's type and message.
Run it against two wheels (PYTHONPATH=SITE): the same hash means the same answers.
"""

import hashlib
import json
import sys

import toolmend

EDGES = [
    "", " ", "True", " None\n", "\x1cFalse\x1f", "\u3000True", "true", "[True]", "null", "NaN", "[NaN]",
    "Infinity", '{"a": 1e400}', '{"a": -1e400}', "1e400", "[1.0, 2.50, -0.0, 1e16, 1e-5, 123456789012345678901234]",
    '{"a": 12345678901234567890, "b": -9223372036854775809, "c": 18446744073709551615}',
    '{"a": "\\ud800"}', '{"a": "\\ud83d\\ude00 é \\u007f \\u0000"}', '{"a": "é😀\x7f"}',
    '{"a": 1, "a": 2}', "{'a': 1, 'a': 2,}", '{"a": 1}{"b": 2}', '{"a": 1}, {"b": 2}', "[1] [2]",
    "just prose", "{'a': ...}", '{"a": }', '"x"', "'x'", '""', "''", "12", "-", "[", "{",
    "[" * 101 + "]" * 101, "[" * 129 + "]" * 129, '{"a":' * 101 + "1" + "}" * 101,
    '{"a":' * 120 + "1" + "}" * 120, '{"a": 1,}' + " " * 17000, '{"a": "' + "x" * 17000 + '"}',
    '{"a": "' + "x" * 17000 + '",}', "True" + " " * 17000, '{"a": .25, "b": 1_000, "c": +1, "d": 1.}',
    '{"a": "line\n"}', '{"a": "val\n', '{"a": "val\\', '{"n": 1/3, "u": 57eeeeb1-450b-482c-81b9-4be77e95dee2}',
    '{"a": (1, 2), "b": {3, 4}}', "```json\n{\"a\": 1}\n```", "a ```json {\"k\":1} ``` b ```json [2] ``` c",
    '{"k": "\\/ \\b\\f\\n\\r\\t \\"q\\" \\\\"}', "[\"\\u00e9\", \"\u00e9\"]", '{"emoji": "\U0001F600"}',
    "\ufeff{'a': 1}", '{"a": 1.5E+3, "b": 2e-7, "c": 0.1, "d": 100.0, "e": 1e22}',
]

CALLS = {
    "loads": lambda t: toolmend.loads(t),
    "loads_stream_stable": lambda t: toolmend.loads(t, stream_stable=True),
    "loads_skip": lambda t: toolmend.loads(t, skip_json_loads=True),
    "repair_json": lambda t: toolmend.repair_json(t),
    "repair_json_stream_stable": lambda t: toolmend.repair_json(t, stream_stable=True),
    "repair_json_objects": lambda t: toolmend.repair_json(t, return_objects=True),
    "repair_json_skip": lambda t: toolmend.repair_json(t, skip_json_loads=True),
    "repair_json_unicode": lambda t: toolmend.repair_json(t, ensure_ascii=False),
}


def tagged(v):
    """The value with its exact types spelt out (1 == 1.0 == True in Python)."""
    if isinstance(v, dict):
        return ["dict", [[tagged(k), tagged(x)] for k, x in v.items()]]
    if isinstance(v, list):
        return ["list", [tagged(x) for x in v]]
    if isinstance(v, tuple):
        return ["tuple", [tagged(x) for x in v]]
    return [type(v).__name__, repr(v)]


def main():
    inputs = [json.loads(line)["input"] for line in open(sys.argv[1], encoding="utf-8")]
    for path in sys.argv[2:]:
        inputs += [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    inputs += EDGES
    digest = hashlib.sha256()
    per_call = {name: hashlib.sha256() for name in CALLS}
    for text in inputs:
        for name, call in CALLS.items():
            try:
                answer = tagged(call(text))
            except Exception as err:  # an exception is an answer like any other
                answer = ["raised", type(err).__name__, str(err)]
            line = json.dumps([name, text, answer]).encode()
            digest.update(line)
            per_call[name].update(line)
    print(f"{len(inputs)} inputs x {len(CALLS)} calls: {digest.hexdigest()}")
    for name, h in per_call.items():
        print(f"  {name}: {h.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
