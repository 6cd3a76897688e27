"""Joins the per-group JSON lines of toolmend and its peers into one Markdown table."""
import json, sys

def load(path):
    return {r["group"]: r for r in map(json.loads, open(path, encoding="utf-8"))}

ours = load(sys.argv[1])
peers = [(arg.split("=", 1)[0], load(arg.split("=", 1)[1])) for arg in sys.argv[2:]]
head = "| group | toolmend ns/call | MB/s | exact/wrong |"
rule = "|---|---:|---:|---:|"
for name, _ in peers:
    head += f" {name} ns/call | ×toolmend | exact/wrong/refused |"
    rule += "---:|---:|---:|"
print(head)
print(rule)
for group, r in ours.items():
    per_call = r["ns"] / r["n"]
    row = f"| {group} | {per_call:,.0f} | {r['bytes'] / r['ns'] * 1e3:,.0f} | {r['exact']}/{r['wrong']} |"
    for _, p in peers:
        q = p.get(group)
        if not q or not q["n"]:
            row += " – | – | – |"
            continue
        mark = "~" if q.get("partial") else ""
        q_call = q["ns"] / q["n"]
        row += f" {mark}{q_call:,.0f} | {mark}{q_call / per_call:,.1f} | {q['exact']}/{q['wrong']}/{q['refused']} |"
    print(row)
