"""A `toolmend repair`-shaped command backed by the Python drop-in (`toolmend.loads`).

The peer-suite harness (../shared/peersuites/run_json_repair_suite.sh) calls its binary as
`BIN repair --schema FILE` with the text on stdin and reads one JSON value from stdout; a
non-zero exit means "not repairable" (json_repair's `""`). This measures exactly what
`import toolmend as json_repair` returns: `toolmend.loads(text)`.
"""

import json
import sys

import toolmend

text = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
try:
    value = toolmend.loads(text)
except Exception as err:  # a raise is a disagreement like any other; say why
    print(f"raised {type(err).__name__}: {err}", file=sys.stderr)
    sys.exit(2)
if value == "" and text.strip() not in ('""', "''"):
    sys.exit(1)
sys.stdout.write(json.dumps(value, ensure_ascii=False))
