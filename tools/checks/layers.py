#!/usr/bin/env python3
"""Check that ballast's layers see only the layers below them.

Usage: layers.py SOURCE_DIR [BUILD_DIR]

The layers, bottom up (src/<layer>/ each):

    common ─ tool ─ mon ─ pia ─ assert ─ map ─ topo ─ task ─ policy ─ mig ─ lb

(tool is the tools interface's dispatch: it sees common only, and mon,
pia, assert, task and lb see it. topo sees common, map and mon's hooks: it
installs mon's topology mapper. policy, the policy and the load-balancing
record's reader, sees common and map only: ballast-lbsim links it alone.
mig, the migration engine and its pool, sees common only: it knows nothing
of tasks.)

1. Includes: a file of src/<layer>/ may include private headers ("x/y.h")
   only of the layers it sees (SEES below). The assertion layer, the task
   runtime and load balancing see of mon only mon/mon_hooks.h; load
   balancing sees of the task runtime only task/task_hooks.h (HOOKS).
2. Symbols (with BUILD_DIR): every symbol an object file of one layer leaves
   undefined and another layer defines must belong to a layer it sees; a
   symbol of a layer seen through its hooks header only (mon from above
   pia, task from lb) must be public or declared in that header.
   This catches calls up the stack that an extern declaration would hide from
   the include check.

3. Prefixes: every internal symbol (x__name, macros X__NAME) that
   src/<layer>/ defines (functions, variables, types, struct tags, macros)
   carries the layer's prefix, PREFIX below (common's ballast__, every other
   layer's its folder's name), and a layer's code names internal symbols
   only of the layers it sees. The README's Architecture section has the map
   (module, folder, public header, prefixes); this keeps it true.

Prints every violation as "file: ..." and exits 1 when there is one.
"""
import glob
import os
import re
import subprocess
import sys

from func_length import strip  # same directory: the C text without comments and strings

ORDER = ["common", "tool", "mon", "pia", "assert", "map", "topo", "task", "policy", "mig", "lb"]
SEES = {
    "common": {"common"},
    "tool": {"common", "tool"},
    "mon": {"common", "tool", "mon"},
    "pia": {"common", "tool", "mon", "pia"},
    "assert": {"common", "tool", "mon_hooks", "pia", "assert"},
    "map": {"common", "map"},
    "topo": {"common", "mon_hooks", "map", "topo"},
    "task": {"common", "tool", "mon_hooks", "pia", "map", "task"},
    "policy": {"common", "map", "policy"},
    "mig": {"common", "mig"},
    "lb": {"common", "tool", "mon_hooks", "pia", "assert", "map", "task_hooks", "policy", "mig",
           "lb"},
}
# Layers that offer the layers above one declared header, src/x/x_hooks.h.
HOOKS = ("mon", "task")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_includes(src):
    bad = []
    for layer in ORDER:
        for path in sorted(glob.glob(os.path.join(src, "src", layer, "**", "*.[ch]"),
                                     recursive=True)):
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                if "/" not in inc:
                    continue
                top = inc.split("/")[0]
                if top not in ORDER:
                    continue
                ok = top in SEES[layer] or (
                    top in HOOKS and inc == f"{top}/{top}_hooks.h"
                    and f"{top}_hooks" in SEES[layer])
                if not ok:
                    rel = os.path.relpath(path, src)
                    bad.append(f"{rel}: includes \"{inc}\" of layer {top}, "
                               f"which layer {layer} does not see")
    return bad


def nm(objs, undefined):
    if not objs:
        return {}
    flag = ["--undefined-only"] if undefined else ["--defined-only", "--extern-only"]
    out = subprocess.run(["nm", "-A"] + flag + objs, capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        # "file.o:  U name" or "file.o:0000 T name"
        obj, _, rest = line.partition(":")
        parts = rest.split()
        if len(parts) >= 2:
            syms.setdefault(parts[-1], set()).add(obj)
    return syms


def hook_names(src, layer):
    with open(os.path.join(src, "src", layer, f"{layer}_hooks.h"), encoding="utf-8") as f:
        return set(re.findall(r"\b(\w+__\w+)\s*\(", f.read()))


def check_symbols(src, build):
    objs = {l: sorted(glob.glob(os.path.join(build, "src", l, "CMakeFiles", f"ballast_{l}.dir",
                                             "**", "*.o"), recursive=True)) for l in ORDER}
    missing = [l for l in ORDER if not objs[l]]
    if missing:
        return [f"{build}: no object files for layer(s) {', '.join(missing)} (build first)"]
    owner = {}
    for l in ORDER:
        for sym in nm(objs[l], undefined=False):
            owner[sym] = l
    hooks = {h: hook_names(src, h) for h in HOOKS}
    bad = []
    for l in ORDER:
        for sym, users in sorted(nm(objs[l], undefined=True).items()):
            o = owner.get(sym)
            if re.match(r"P?MPI_|p?mpi_", sym):
                continue  # MPI itself (mon's wrappers define these names)
            if o is None or o == l:
                continue
            if o in SEES[l]:
                continue
            if o in HOOKS and f"{o}_hooks" in SEES[l] and ("__" not in sym
                                                         or sym in hooks[o]):
                continue
            for u in sorted(users):
                bad.append(f"{os.path.relpath(u, build)}: layer {l} uses {sym} of layer {o}, "
                           f"which it does not see")
    return bad


# Each layer's internal prefix (rule 3): common's is ballast__, every other
# layer's its folder's name.
PREFIX = {l: ("ballast" if l == "common" else l) for l in ORDER}
INTERNAL = re.compile(r"\b([A-Za-z][A-Za-z0-9]*)__([A-Za-z0-9]\w*)")
DEFINES = [
    # a function definition: return type, name, parameters, body
    re.compile(r"^[A-Za-z_][^;{}()=#]*?\b(\w+)\s*\([^;{}]*\)\s*\{", re.M),
    re.compile(r"^\s*#\s*define\s+(\w+)", re.M),
    re.compile(r"\b(?:struct|union|enum)\s+(\w+)\s*\{"),
    re.compile(r"\}\s*(\w+)\s*(?:\[[^\]]*\])?\s*[;=]"),
    re.compile(r"^typedef\b[^;{]*?\b(\w+)\s*(?:\)\s*\([^;]*\))?\s*;", re.M),
    # a variable at file scope
    re.compile(r"^(?!typedef\b|extern\b|return\b|(?:struct|union|enum)\s+\w+\s*;)"
               r"[A-Za-z_][\w \t*]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*[=;]", re.M),
    re.compile(r"^\s*([A-Z][A-Z0-9]*__[A-Z0-9_]+)\s*[,=]", re.M),  # an enum constant
]


def check_prefixes(src):
    """Rule 3: what each layer defines carries its prefix, what it names is seen."""
    bad = []
    for layer in ORDER:
        own = PREFIX[layer]
        sees = {PREFIX.get(s.replace("_hooks", ""), s) for s in SEES[layer]} | {own}
        for path in sorted(glob.glob(os.path.join(src, "src", layer, "**", "*.[ch]"),
                                     recursive=True)):
            with open(path, encoding="utf-8", errors="replace") as f:
                code = strip(f.read(), directives=True)
            rel = os.path.relpath(path, src)
            defined = set()
            for rx in DEFINES:
                defined.update(m.group(1) for m in rx.finditer(code))
            for name in sorted(defined):
                m = INTERNAL.fullmatch(name)
                if m and m.group(1).lower() != own:
                    bad.append(f"{rel}: defines {name}, but layer {layer}'s internal "
                               f"prefix is {own}__ ({own.upper()}__ for macros)")
            used = {m.group(0): m.group(1).lower() for m in INTERNAL.finditer(code)}
            for name, pre in sorted(used.items()):
                if pre not in sees and name not in defined:
                    bad.append(f"{rel}: names {name}, whose prefix {pre}__ is not of a "
                               f"layer {layer} sees")
    return bad


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    src = argv[0]
    bad = check_includes(src)
    bad += check_prefixes(src)
    if len(argv) > 1:
        bad += check_symbols(src, argv[1])
    for b in bad:
        print(b)
    print(f"layers: {len(bad)} violation(s)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
