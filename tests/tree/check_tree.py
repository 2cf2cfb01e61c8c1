#!/usr/bin/env python3
"""Checks the shape of the source tree (docs/architecture.md):

- src/ is in folders by stage, and a folder includes only the folders
  before it in the pipeline (LAYERS below): no include cycle between
  folders, and the data flow reads off the tree;
- tests/ mirrors src/: a test folder for every source folder;
- no source, public header, test or Python-module file is over 800 lines;
- the public headers (include/daedalus/) name no SUNDIALS or SuiteSparse
  header or type;
- every test file's anonymous namespace opens a namespace named after the
  file (`namespace { namespace foo_test {` in foo_test.cpp): the test
  binaries are unity builds (DAEDALUS_UNITY_BUILD), one translation unit
  per binary, where two files' helpers of the same name would clash.

Usage: check_tree.py SOURCE_DIR. Prints every violation and exits 1 if
there is one.
"""
import os
import re
import sys

# Each folder may include the folders listed for it (and itself).
LAYERS = {
    "model": [],
    "multibody": ["model"],
    "eval": ["model"],
    "kkt": ["model", "eval"],
    "formulation": ["model", "eval", "kkt"],
    "sensitivity": ["model", "eval", "kkt", "formulation"],
    "monitor": ["model", "eval", "kkt", "formulation"],
    "events": ["model", "eval", "kkt", "formulation", "sensitivity",
               "monitor"],
    "integrate": ["model", "eval", "kkt", "formulation", "sensitivity",
                  "monitor", "events"],
    "analysis": ["model", "eval", "kkt", "formulation", "sensitivity",
                 "monitor", "events", "integrate"],
    "report": ["model", "eval", "kkt", "formulation", "sensitivity",
               "monitor", "events", "integrate", "analysis"],
    "optimal_control": ["model", "eval", "kkt", "formulation",
                        "sensitivity", "monitor", "events", "integrate",
                        "analysis", "report"],
    "cli": ["model", "eval", "kkt", "formulation", "sensitivity", "monitor",
            "events", "integrate", "analysis", "report", "optimal_control"],
}
MAX_LINES = 800
PRIVATE_DEPENDENCIES = re.compile(
    r'#include\s*[<"](sundials|nvector|sunlinsol|sunmatrix|sunnonlinsol|'
    r'cvodes|idas|cholmod|klu|umfpack|spqr|SuiteSparse|amd|colamd|btf)')
PRIVATE_TYPES = re.compile(
    r'\b(N_Vector|SUNMatrix|SUNLinearSolver|SUNContext|realtype|'
    r'cholmod_\w+|klu_\w+|SuiteSparseQR\w*)\b')
INCLUDE = re.compile(r'#include\s*"([a-z_]+)/[^"]+"')


def unity_namespace_problems(rel, name, text):
    """Each `namespace {` of a test file must be followed by
    `namespace STEM {` and closed by `}  // namespace STEM` then
    `}  // namespace` (STEM: the file name without .cpp)."""
    stem = name[:-len(".cpp")]
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line == "namespace {":
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if nxt != f"namespace {stem} {{":
                found.append(f"{rel}:{i + 1}: the anonymous namespace must "
                             f"open `namespace {stem} {{` on the next line "
                             "(test binaries are unity builds; helpers of "
                             "two files must not clash)")
        if line == "}  // namespace":
            prev = lines[i - 1] if i > 0 else ""
            if prev != f"}}  // namespace {stem}":
                found.append(f"{rel}:{i + 1}: close `namespace {stem}` "
                             "on the line before the anonymous namespace's "
                             f"end (`}}  // namespace {stem}`)")
    return found


def main(root):
    problems = []
    src = os.path.join(root, "src")
    folders = sorted(d for d in os.listdir(src)
                     if os.path.isdir(os.path.join(src, d)))
    for d in folders:
        if d not in LAYERS:
            problems.append(f"src/{d}/ is not a stage of the pipeline "
                            "(add it to LAYERS and docs/architecture.md)")
    for name in os.listdir(src):
        if name.endswith((".cpp", ".hpp")):
            problems.append(f"src/{name} is outside the stage folders")
    for d in LAYERS:
        if not os.path.isdir(os.path.join(root, "tests", d)):
            problems.append(f"tests/{d}/ is missing: tests mirror src/")
    edges = set()
    for d in folders:
        for base, _, files in os.walk(os.path.join(src, d)):
            for f in files:
                if not f.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                n = text.count("\n")
                if n > MAX_LINES:
                    problems.append(f"{rel}: {n} lines (limit {MAX_LINES})")
                for m in INCLUDE.finditer(text):
                    to = m.group(1)
                    if to == "daedalus" or to == d:
                        continue
                    edges.add((d, to))
                    if to not in LAYERS.get(d, []):
                        problems.append(f"{rel} includes {m.group(0)[10:-1]}: "
                                        f"{d}/ may include only "
                                        f"{LAYERS.get(d, [])}")
    # A cycle between folders would violate the layering above; report it
    # as a cycle too when there is one.
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)

    def cycle_from(node, stack, seen):
        seen.add(node)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt in stack:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in seen:
                c = cycle_from(nxt, stack, seen)
                if c:
                    return c
        stack.pop()
        return None

    seen = set()
    for node in sorted(graph):
        if node not in seen:
            c = cycle_from(node, [], seen)
            if c:
                problems.append("include cycle between folders: " +
                                " -> ".join(c))
                break
    for dirpath, _, files in sorted(
            list(os.walk(os.path.join(root, "tests"))) +
            list(os.walk(os.path.join(root, "python")))):
        for f in sorted(files):
            if not f.endswith((".cpp", ".hpp", ".py")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            n = text.count("\n")
            if n > MAX_LINES:
                problems.append(f"{rel}: {n} lines (limit {MAX_LINES})")
            if f.endswith(".cpp") and dirpath.startswith(
                    os.path.join(root, "tests")):
                problems.extend(unity_namespace_problems(rel, f, text))
    inc = os.path.join(root, "include", "daedalus")
    for f in sorted(os.listdir(inc)):
        path = os.path.join(inc, f)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        n = text.count("\n")
        if n > MAX_LINES:
            problems.append(f"include/daedalus/{f}: {n} lines "
                            f"(limit {MAX_LINES})")
        for i, line in enumerate(text.splitlines(), 1):
            code = line.split("//")[0]
            if PRIVATE_DEPENDENCIES.search(code):
                problems.append(f"include/daedalus/{f}:{i}: includes a "
                                f"SUNDIALS or SuiteSparse header: {line}")
            if PRIVATE_TYPES.search(code):
                problems.append(f"include/daedalus/{f}:{i}: names a SUNDIALS "
                                f"or SuiteSparse type: {line}")
    for p in problems:
        print(p)
    print(f"checked {len(folders)} source folders, {len(edges)} folder "
          f"dependencies: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
