// Times npm `jsonrepair` (+ JSON.parse) on a make_corpus.py corpus; one JSON line per group, as
// `salvage_corpus --json` prints them. Best of 3 runs per group.
const fs = require("fs");
const { jsonrepair } = require("jsonrepair");
const groups = new Map();
for (const line of fs.readFileSync(process.argv[2], "utf8").split("\n")) {
  if (!line) continue;
  const c = JSON.parse(line);
  if (!groups.has(c.group)) groups.set(c.group, []);
  groups.get(c.group).push(c);
}
const eq = (a, b) => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}
for (const [name, cases] of groups) {
  let exact = 0, wrong = 0, refused = 0, objects = 0, bytes = 0;
  for (const c of cases) {
    bytes += Buffer.byteLength(c.input, "utf8");
    let v;
    try { v = JSON.parse(jsonrepair(c.input)); } catch { v = undefined; }
    if (v === undefined) { refused++; continue; }
    if (v && typeof v === "object" && !Array.isArray(v)) objects++;
    if ("expect" in c) { if (eq(v, c.expect)) exact++; else wrong++; }
  }
  let best = Infinity;
  for (let r = 0; r < 3; r++) {
    const t = process.hrtime.bigint();
    for (const c of cases) { try { JSON.parse(jsonrepair(c.input)); } catch {} }
    best = Math.min(best, Number(process.hrtime.bigint() - t));
  }
  console.log(JSON.stringify({ group: name, n: cases.length, bytes, exact, wrong, refused, objects, ns: best }));
}
