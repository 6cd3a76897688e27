"""Generates a dataset of recorded tool calls (≥ 1M rows) as Parquet and JSONL, for batch repair.

    python bench/scale/make_calls.py OUT_DIR [--rows 1000000] [--files 8] [--seed 7]

The calls are ../shared/bench/make_corpus.py's (relative to the repository root; its argument
objects and its malformation kinds, imported, not copied): a pool of base objects, mostly its
small ~100 B calls (read a range, grep, run a command, web search, edit) and 3% of its medium
~2 KB `write_file` calls, each under the tool a schema here gives it. Each row picks an object
and, in the proportions of a log, writes it valid (70%, the bytes `json.dumps` gives) or
broken by one of make_corpus's kinds (30%: fenced, prose around it, trailing commas, single
quotes, Python literals, raw control characters in strings, all of them mixed, cut off).

OUT_DIR gets `parquet/part-NN.parquet` and `jsonl/part-NN.jsonl` (--files of each; columns
`id`, `name`, `arguments`, `variant`), `tools.json` (the tool set) and `manifest.json`
(rows, seed, counts by variant). Deterministic for a seed. Needs pyarrow. The data is not
committed: bench/out is git-ignored, and bench/scale/batch.sh writes there.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import random
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
MAKE_CORPUS = ROOT.parent / "shared" / "bench" / "make_corpus.py"

_NULLABLE_STRING = {"type": ["string", "null"]}


def _tool(name: str, required, properties) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "required": list(required), "properties": properties,
        "additionalProperties": False}}}


# One tool per argument shape of make_corpus.small_args / file_args, typed as those objects are.
TOOLS = [
    _tool("read_file", ["path"], {"path": {"type": "string"}, "start_line": {"type": "integer"},
                                  "end_line": {"type": "integer"}, "follow_symlinks": {"type": "boolean"}}),
    _tool("grep", ["pattern"], {"pattern": {"type": "string"}, "path": {"type": "string"},
                                "case_insensitive": {"type": "boolean"}, "max_results": {"type": "integer"},
                                "glob": _NULLABLE_STRING}),
    _tool("bash", ["command"], {"command": {"type": "string"}, "timeout_ms": {"type": "integer"},
                                "cwd": _NULLABLE_STRING, "background": {"type": "boolean"}}),
    _tool("web_search", ["query"], {"query": {"type": "string"}, "num_results": {"type": "integer"},
                                    "safe": {"type": "boolean"}, "lang": {"type": "string"}}),
    _tool("edit", ["path", "old_str", "new_str"], {
        "path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"},
        "replace_all": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}}}),
    _tool("write_file", ["path", "content"], {
        "path": {"type": "string"}, "content": {"type": "string"}, "create_dirs": {"type": "boolean"},
        "mode": _NULLABLE_STRING, "encoding": {"type": "string"}, "overwrite": {"type": "boolean"},
        "lines_hint": {"type": "integer"}}),
]

# The key that tells make_corpus's shapes apart, and the tool it belongs to.
_TOOL_BY_KEY = {"start_line": "read_file", "pattern": "grep", "command": "bash", "query": "web_search",
                "old_str": "edit", "content": "write_file"}

VALID_SHARE = 0.7
MEDIUM_SHARE = 0.03


def load_make_corpus(path: Path = MAKE_CORPUS):
    """Imports make_corpus.py from the shared bench folder (read-only; never copied in)."""
    if not path.is_file():
        sys.exit(f"make_calls: {path} not found (the shared bench folder beside the repository)")
    spec = importlib.util.spec_from_file_location("make_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tool_name(obj: dict) -> str:
    for key, name in _TOOL_BY_KEY.items():
        if key in obj:
            return name
    raise ValueError(f"no tool for an object with keys {sorted(obj)}")


def pool(corpus, rng: random.Random, size: int):
    """`size` base calls: (tool name, {variant: text}) with make_corpus's variants of each."""
    out = []
    for _ in range(size):
        obj = corpus.file_args(rng, 1800) if rng.random() < MEDIUM_SHARE else corpus.small_args(rng)
        texts = corpus.variants(obj, rng)
        # make_corpus drops a variant that came out equal to the valid text; so does this.
        texts = {k: v for k, v in texts.items() if k == "valid" or v != texts["valid"]}
        out.append((tool_name(obj), texts))
    return out


def rows(corpus, count: int, seed: int, pool_size: int = 20_000):
    """`count` rows (name, arguments, variant), drawn from a pool of distinct base calls."""
    rng = random.Random(seed)
    base = pool(corpus, rng, min(pool_size, count))
    names, arguments, variants = [], [], []
    for _ in range(count):
        name, texts = base[rng.randrange(len(base))]
        if rng.random() < VALID_SHARE:
            variant = "valid"
        else:
            variant = rng.choice([k for k in texts if k != "valid"])
        names.append(name)
        arguments.append(texts[variant])
        variants.append(variant)
    return names, arguments, variants


def write(out: Path, names, arguments, variants, files: int) -> None:
    table = pa.table({"id": pa.array(range(len(names)), pa.int64()), "name": names,
                      "arguments": arguments, "variant": variants})
    (out / "parquet").mkdir(parents=True, exist_ok=True)
    (out / "jsonl").mkdir(parents=True, exist_ok=True)
    per_file = -(-table.num_rows // files)
    for part in range(files):
        chunk = table.slice(part * per_file, per_file)
        pq.write_table(chunk, out / "parquet" / f"part-{part:02d}.parquet", row_group_size=65_536)
        with open(out / "jsonl" / f"part-{part:02d}.jsonl", "w", encoding="utf-8") as f:
            for row in chunk.to_pylist():
                f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    corpus = load_make_corpus()
    names, arguments, variants = rows(corpus, args.rows, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    write(args.out, names, arguments, variants, args.files)
    (args.out / "tools.json").write_text(json.dumps(TOOLS, indent=1) + "\n", encoding="utf-8")
    manifest = {"rows": args.rows, "files": args.files, "seed": args.seed,
                "bytes_of_arguments": sum(len(a.encode("utf-8")) for a in arguments),
                "variants": dict(sorted(collections.Counter(variants).items())),
                "tools": dict(sorted(collections.Counter(names).items()))}
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"make_calls: {args.rows:,} calls in {args.out} ({manifest['bytes_of_arguments'] / 1e6:.0f} MB "
          f"of arguments), variants {manifest['variants']}")


if __name__ == "__main__":
    main()
