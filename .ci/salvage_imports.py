#!/usr/bin/env python3
"""Fails on an import cycle between files of different folders in crates/toolmend/src/salvage/.

The salvage stage reads one way down (issue #30): entry -> extract -> parser -> scan, the strict
reader and the document layer below the parser. A circle between a type and the files that
implement it may stay inside one folder (parser/), never across folders.

Edges come from each file's `use` lines and inline `super::…`/`crate::salvage::…` paths,
resolved to the file that defines the module named (or, for an item of a module, that
module's file); a folder's re-exports count as edges into the files they name. Not counted:
the stage's own facade (the re-exports of salvage/mod.rs, which every file's vocabulary
lives beside), `mod` lines, comments, and `#[cfg(test)]` modules (tests may reach the public
entry to compare end to end). Prints the cycles found; exit 1 if any crosses folders.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "toolmend", "src", "salvage")


def module_files(root):
    """Module path (tuple) -> file path, for every .rs under root."""
    files = {}
    for dirpath, _, names in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        base = () if rel == "." else tuple(rel.split(os.sep))
        for name in names:
            if not name.endswith(".rs"):
                continue
            stem = name[:-3]
            module = base if stem == "mod" else base + (stem,)
            files[module] = os.path.join(dirpath, name)
    return files


def code_of(path, facade=False):
    """The file's text before its first `#[cfg(test)]`, without comments (and, for the stage's
    facade, its re-exports)."""
    out = []
    statement = []
    for line in open(path, encoding="utf-8"):
        stripped = line.strip()
        if stripped.startswith("#[cfg(test)]"):
            break
        line = re.sub(r"//.*", "", line)
        if facade and (statement or re.match(r"\s*pub(\([^)]*\))?\s+use\b", line)):
            # Skip a re-export, to its `;`.
            statement.append(line)
            if ";" in line:
                statement = []
            continue
        if re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*;", line):
            continue
        out.append(line)
    return "".join(out)


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    tree = re.sub(r"\s+", "", tree)
    depth = 0
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix = tree[:i]
                inner = tree[i + 1 : tree.rindex("}")]
                parts, level, start = [], 0, 0
                for j, c in enumerate(inner):
                    if c == "{":
                        level += 1
                    elif c == "}":
                        level -= 1
                    elif c == "," and level == 0:
                        parts.append(inner[start:j])
                        start = j + 1
                parts.append(inner[start:])
                return [p for part in parts if part for p in expand_use(prefix + part)]
            depth += 1
    return [tree]


def paths_in(code, children=()):
    paths = []
    # A folder's mod.rs names its child modules bare (`lookahead::followed_by`).
    for child in children:
        if re.search(r"(?<![\w:])" + re.escape(child) + r"::", code):
            paths.append(child)
    for match in re.finditer(r"\buse\s+([^;]+);", code):
        paths.extend(expand_use(match.group(1)))
    # Inline paths: super::x::y(…), crate::salvage::x::y.
    for match in re.finditer(r"\b((?:super::)+[A-Za-z_][\w:]*|crate::salvage::[\w:]+)", code):
        paths.append(match.group(1))
    return paths


def resolve(module, path, files):
    """The file (module key) a path from `module` lands in, or None outside salvage."""
    segments = path.split("::")
    if segments[0] == "crate":
        if len(segments) < 2 or segments[1] != "salvage":
            return None
        base, rest = (), segments[2:]
    elif segments[0] in ("super", "self"):
        # A file's `self` is its module (a folder's mod.rs: the folder); `super` its parent.
        base, rest = module, list(segments)
        if rest[0] == "self":
            rest = rest[1:]
        while rest and rest[0] == "super":
            if not base:
                return None  # above salvage
            base = base[:-1]
            rest = rest[1:]
    else:
        # A child module of this one (`use strings::Str` from parser/mod.rs) or an outside crate.
        is_folder = files[module].endswith("mod.rs")
        if not is_folder or (module + (segments[0],)) not in files:
            return None
        base, rest = module, segments
    target = base
    for segment in rest:
        if segment in ("self", "*"):
            break
        if target + (segment,) in files:
            target = target + (segment,)
        else:
            break
    return target if target in files else None


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def folder(module, files):
    return os.path.dirname(files[module])


def main():
    root = os.path.normpath(sys.argv[1] if len(sys.argv) > 1 else ROOT)
    files = module_files(root)
    graph = {m: set() for m in files}
    for module, path in files.items():
        children = [m[-1] for m in files if m[:-1] == module and len(m) == len(module) + 1]
        code = code_of(path, facade=module == ())
        for p in paths_in(code, children if path.endswith("mod.rs") else ()):
            target = resolve(module, p, files)
            if target is not None and target != module:
                graph[module].add(target)
    name = lambda m: os.path.relpath(files[m], root)
    bad = 0
    for component in cycles(graph):
        folders = {folder(m, files) for m in component}
        crosses = len(folders) > 1
        bad += crosses
        print(("cycle across folders: " if crosses else "cycle inside one folder (allowed): ")
              + ", ".join(name(m) for m in component))
    if bad:
        print(f"salvage imports: {bad} cycle(s) between files of different folders", file=sys.stderr)
        return 1
    print(f"salvage imports: {len(files)} files, no cycle between files of different folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
