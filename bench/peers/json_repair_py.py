"""Times Python `json_repair` on a make_corpus.py corpus; one JSON line per group, as
`salvage_corpus --json` prints them. A group over PEER_BUDGET_S seconds stops early (`partial`)."""
import json, os, sys, time
from collections import OrderedDict

import json_repair

budget = float(os.environ.get("PEER_BUDGET_S", "20"))
groups = OrderedDict()
for line in open(sys.argv[1], encoding="utf-8"):
    case = json.loads(line)
    groups.setdefault(case["group"], []).append(case)
for name, cases in groups.items():
    exact = wrong = refused = objects = done = nbytes = 0
    spent = 0.0
    for case in cases:
        start = time.perf_counter()
        try:
            value = json_repair.loads(case["input"])
        except Exception:
            value = None
        spent += time.perf_counter() - start
        done += 1
        nbytes += len(case["input"].encode("utf-8"))
        if value is None or value == "":
            refused += 1
        else:
            objects += isinstance(value, dict)
            if "expect" in case:
                exact += value == case["expect"]
                wrong += value != case["expect"]
        if spent > budget:
            break
    print(json.dumps({"group": name, "n": done, "bytes": nbytes, "exact": exact, "wrong": wrong,
                      "refused": refused, "objects": objects, "ns": int(spent * 1e9),
                      "partial": done < len(cases)}))
