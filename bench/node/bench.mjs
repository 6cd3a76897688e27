// toolmend.jsonrepair and Mender.repairCall vs npm jsonrepair vs JSON.parse, in one process,
// on a ../shared/bench/make_corpus.py corpus.
//
//   node bench/node/bench.mjs [CORPUS.jsonl] [--budget SECONDS]
//
// Build the release addon first (crates/toolmend-node: `npm run build:native && npm run
// build:ts`); npm jsonrepair comes from that package's pinned devDependencies. Without CORPUS
// the corpus is generated into a temporary file (python3, the shared make_corpus.py).
//
// For each size (small ~100 B, medium ~2 KB, large ~200 KB) it prints, per implementation,
// µs per call and MB/s over the malformed variants and over `valid`, with ratios: malformed
// against npm jsonrepair, valid against JSON.parse. Every implementation goes text → value
// (`JSON.parse(jsonrepair(text))`, `mender.repairCall(name, text).arguments`), so all do the
// same work; `text only` rows stop at the repaired string (what jsonrepair users get). The
// `crossing` row is the cost of handing the string to Rust and back with no work (a ToolSet
// name lookup), the floor of any call into the addon. The `async` rows time repairCallAsync
// awaited one at a time (latency) against the same call made synchronously.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const pkg = path.join(root, 'crates', 'toolmend-node');
const require = createRequire(path.join(pkg, 'package.json'));
const toolmend = require('./dist/index.js');
const native = require('./binding.js');
const { jsonrepair: npmJsonrepair } = require('jsonrepair');
const npmVersion = JSON.parse(fs.readFileSync(path.join(pkg, 'node_modules', 'jsonrepair', 'package.json'), 'utf8')).version;

const args = process.argv.slice(2);
const budgetAt = args.indexOf('--budget');
const budget = budgetAt >= 0 ? Number(args.splice(budgetAt, 2)[1]) : 0.5;
let corpusPath = args[0];
if (!corpusPath) {
  corpusPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'toolmend-bench-')), 'corpus.jsonl');
  execFileSync('python3', [path.join(root, '..', 'shared', 'bench', 'make_corpus.py'), corpusPath]);
}
const cases = fs.readFileSync(corpusPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

// One open tool: the corpus's calls are schema-free documents here (salvage and the call
// pipeline's fast path are what is timed; schema repairs are the Rust benches' business).
const tools = toolmend.ToolSet.from([{ name: 'tool', parameters: { type: 'object' } }]);
const mender = new toolmend.Mender(tools);
const nativeTools = tools.native;

const value = (f) => (text) => { try { return f(text); } catch { return undefined; } };
const IMPLS = {
  'JSON.parse': value((t) => JSON.parse(t)),
  'npm jsonrepair': value((t) => JSON.parse(npmJsonrepair(t))),
  'toolmend.jsonrepair': value((t) => JSON.parse(toolmend.jsonrepair(t))),
  'Mender.repairCall': (t) => { const c = mender.repairCall('tool', t); return c.dispatchable ? c.arguments : undefined; },
  'toolmend.salvageJson': value((t) => toolmend.salvageJson(t).value),
  'npm jsonrepair (text only)': value((t) => npmJsonrepair(t)),
  'toolmend.jsonrepair (text only)': value((t) => toolmend.jsonrepair(t)),
  'Mender.repairCall (text only)': (t) => { const c = mender.repairCall('tool', t); return c.dispatchable ? c.argumentsText : undefined; },
  'crossing (string to Rust, no work)': (t) => nativeTools.has(t),
};

/** Best-of-3 seconds per pass over `inputs`, each pass repeated until `budget / 3` is spent. */
function time(f, inputs) {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    let passes = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    do {
      for (const t of inputs) f(t);
      passes++;
      elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    } while (elapsed < budget / 3);
    best = Math.min(best, elapsed / passes);
  }
  return best;
}

async function timeAsync(inputs) {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    let passes = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    do {
      for (const t of inputs) await mender.repairCallAsync('tool', t);
      passes++;
      elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    } while (elapsed < budget / 3);
    best = Math.min(best, elapsed / passes);
  }
  return best;
}

const fmt = (n, d = 1) => n.toFixed(d).padStart(9);
console.log(`node ${process.version}, npm jsonrepair ${npmVersion}, toolmend engine ${toolmend.engineVersion}, budget ${budget}s`);
for (const size of ['small', 'medium', 'large']) {
  const sized = cases.filter((c) => c.group.startsWith(`${size}/`));
  const valid = sized.filter((c) => c.group.endsWith('/valid')).map((c) => c.input);
  const broken = sized.filter((c) => !c.group.endsWith('/valid')).map((c) => c.input);
  const bytes = (xs) => xs.reduce((n, t) => n + Buffer.byteLength(t), 0);
  console.log(`\n${size}: ${valid.length} valid (${bytes(valid)} B), ${broken.length} malformed (${bytes(broken)} B)`);
  console.log(`${'implementation'.padEnd(36)} ${'valid µs'.padStart(9)} ${'MB/s'.padStart(9)} ${'×JSON.parse'.padStart(11)} | ${'malformed µs'.padStart(12)} ${'MB/s'.padStart(9)} ${'×jsonrepair'.padStart(11)} ${'ok'.padStart(5)}`);
  const rows = {};
  for (const [name, f] of Object.entries(IMPLS)) {
    const v = time(f, valid);
    const b = name === 'JSON.parse' ? NaN : time(f, broken);
    const ok = broken.filter((t) => f(t) !== undefined && f(t) !== false).length;
    rows[name] = { v, b, ok };
  }
  for (const [name, { v, b, ok }] of Object.entries(rows)) {
    const ref = name.includes('text only') ? rows['npm jsonrepair (text only)'].b : rows['npm jsonrepair'].b;
    console.log(
      `${name.padEnd(36)} ${fmt((v / valid.length) * 1e6)} ${fmt(bytes(valid) / v / 1e6)} ${fmt(v / rows['JSON.parse'].v, 2).padStart(11)} | ` +
      (Number.isNaN(b) ? `${'-'.padStart(12)} ${'-'.padStart(9)} ${'-'.padStart(11)} ${'-'.padStart(5)}`
        : `${fmt((b / broken.length) * 1e6).padStart(12)} ${fmt(bytes(broken) / b / 1e6)} ${fmt(ref / b, 2).padStart(11)} ${String(ok).padStart(5)}`),
    );
  }
  const all = sized.map((c) => c.input);
  const sync = time((t) => mender.repairCall('tool', t), all);
  const async = await timeAsync(all);
  console.log(`repairCallAsync awaited one by one: ${fmt((async / all.length) * 1e6)} µs/call vs sync ${fmt((sync / all.length) * 1e6)} µs/call (×${(async / sync).toFixed(2)})`);
}
