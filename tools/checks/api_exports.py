#!/usr/bin/env python3
"""Check that the shared library exports the documented API and nothing else.

Usage: api_exports.py INCLUDE_DIR LIBRARY MPI_H [NM]

The documented list is derived from the public headers, not written by hand:
every BALLAST_API declaration in INCLUDE_DIR/*.h (the same parser as
doc_convention.py), so a branch that adds a documented function adds it to
the list. The exports are `nm -D --defined-only LIBRARY`.

It fails (exit 1), printing one line per name, on
  - a documented function the library does not export (declared, not built);
  - an exported symbol that no rule below allows (a second name, a helper
    that lost its hidden visibility, a leftover alias).

What the library may export besides the documented functions, and why:
  1. the C wrappers of MPI functions: MPI_Xxx and PMPI_Xxx where Xxx is a
     function MPI_H (the mpi.h the library was built with) declares. mon
     measures every MPI call by defining MPI's own entry points (PMPI
     interposition), so these names are MPI's API, not ballast's;
  2. the Fortran wrappers of those calls, as Open MPI's Fortran bindings
     name them: mpi_xxx, mpi_xxx_, mpi_xxx__, mpi_xxx_f08_ (and the same
     with pmpi_) and MPI_XXX, each only when the C wrapper MPI_Xxx is
     exported too (src/mon/wrap_fortran.h);
  3. the symbols the linker defines in every shared object: _init, _fini,
     _edata, _end, __bss_start.
static inline functions (ballast/cresta.h) are compiled into the caller and
must not be exported.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_convention  # noqa: E402

LINKER = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def documented(include_dir):
    """Names of the BALLAST_API functions, and of the static inline ones."""
    api, inline = set(), set()
    decl = re.compile(r"\bBALLAST_API\b")
    for fname in sorted(os.listdir(include_dir)):
        if not fname.endswith(".h"):
            continue
        path = os.path.join(include_dir, fname)
        with open(path) as f:
            code, _ = doc_convention.strip_comments(f.read())
        lines = code.splitlines()
        for line, name, _, _ in doc_convention.functions(path):
            # The declaration starts on `line` with BALLAST_API (an export)
            # or with `static inline`.
            (api if decl.search(lines[line - 1]) else inline).add(name)
    return api, inline - api


def mpi_functions(mpi_h):
    try:
        with open(mpi_h, errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise SystemExit("api_exports: cannot read mpi.h (%s): the MPI wrappers "
                         "cannot be told from other exports" % e)
    return set(re.findall(r"\b(MPI_[A-Z][a-z0-9_]*)\s*\(", text))


def exports(library, nm):
    out = subprocess.run([nm, "-D", "--defined-only", library], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            names.add(parts[2].split("@")[0])
    return names


def fortran_base(name):
    """The lower-case MPI name a Fortran wrapper stands for, or None."""
    m = re.fullmatch(r"(p?mpi_[a-z0-9_]*?)(?:_f08_|__|_)?", name)
    if m:
        return re.sub(r"^p", "", m.group(1))
    if re.fullmatch(r"P?MPI_[A-Z0-9_]+", name):
        return re.sub(r"^p", "", name.lower())
    return None


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    include_dir, library, mpi_h = argv[1:4]
    nm = argv[4] if len(argv) == 5 else "nm"
    api, inline = documented(include_dir)
    mpi = mpi_functions(mpi_h)
    names = exports(library, nm)
    problems = []
    for name in sorted(api - names):
        problems.append("%s: declared BALLAST_API in include/ballast but not "
                        "exported by %s" % (name, os.path.basename(library)))
    c_wrappers = {n for n in names if re.fullmatch(r"P?MPI_[A-Z][a-z0-9_]*", n)
                  and re.sub(r"^P", "", n) in mpi}
    c_lower = {re.sub(r"^p", "", n.lower()) for n in c_wrappers}
    for name in sorted(names - api):
        if name in LINKER or name in c_wrappers:
            continue
        base = fortran_base(name)
        if base is not None and base in c_lower:
            continue
        why = ("a static inline function of the headers, exported"
               if name in inline else "no public header declares it")
        problems.append("%s: exported, but %s (and no rule of "
                        "tools/checks/api_exports.py allows it)" % (name, why))
    for p in problems:
        print(p)
    if not api:
        print("api_exports: no BALLAST_API declaration found in %s" % include_dir)
        return 1
    print("api_exports: %d documented functions, %d exports (%d MPI C wrappers, "
          "%d others allowed), %d problem(s)" %
          (len(api), len(names), len(c_wrappers),
           len(names) - len(c_wrappers) - len(api & names), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
