"""Every attribute of `Mender.repair_call`'s answer over bench/out/corpus.jsonl (each input
whole, cut at 1/2 and at 1/3), hashed: two wheels that print the same line answer alike
(issue #31: the lazy Call changed when attributes are built, not what they hold).

Usage: PYTHONPATH=SITE python crossing_digest.py SCHEMA.json CORPUS.jsonl
(SCHEMA.json: `small_calls --schema`). Prints the number of calls and the hash.
"""
import hashlib, json, sys
import toolmend
schema = json.load(open(sys.argv[1]))
open_m = toolmend.Mender(toolmend.ToolSet(schema))
h = hashlib.sha256(); n = 0
for line in open(sys.argv[2]):
    text = json.loads(line)["input"]
    for cut in (len(text), len(text) // 2, len(text) // 3):
        c = open_m.repair_call("write_file", text[:cut])
        d = c.to_dict(); d.pop("id")
        attrs = [c.name, c.origin, c.status, c.arguments, c.arguments_text, [(r.kind, r.path) for r in c.repairs],
                 c.notes, c.outcome, c.error, c.native_index, c.dispatchable, repr(c), c.has("trailing_comma")]
        h.update(json.dumps([d, attrs], sort_keys=True, default=str).encode()); n += 1
print(n, h.hexdigest())
