#!/usr/bin/env python3
"""List C functions longer than a limit.

Usage: func_length.py [--limit N] [--list] PATH...

Walks the .c and .h files under each PATH, finds every function definition
(a brace at file scope whose declarator has a parameter list and no '='), and
counts its lines from the first line of its declarator to its closing brace.
Prints each function over the limit as "file:line: name: N lines" and exits 1
when there is one; --list prints every function with its length instead.
"""
import os
import re
import sys


def strip(text, directives=False):
    """Blank out comments, strings and character literals, keeping newlines;
    preprocessor lines too unless \a directives (layers.py reads macros)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        elif not directives and c == "#" and (i == 0 or text[i - 1] == "\n"):
            # preprocessor line (with continuations)
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip(f.read())
    depth = 0
    decl_start = 0          # offset where the current file-scope declaration began
    start = None            # (name, line) of the function being read
    open_at = 0
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                decl = text[decl_start:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\([^;{}]*\)\s*$", decl)
                if m and "=" not in decl.split("(")[0] and not re.search(
                        r"\b(struct|union|enum)\s+\w*\s*$", decl):
                    first = decl_start + len(decl) - len(decl.lstrip())
                    start = (m.group(1), text.count("\n", 0, first) + 1)
                else:
                    start = None
                open_at = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if start:
                    end_line = text.count("\n", 0, i) + 1
                    yield start[0], start[1], end_line - start[1] + 1
                start = None
                decl_start = i + 1
        elif c == ";" and depth == 0:
            decl_start = i + 1


def main(argv):
    limit, listing, paths = 120, False, []
    it = iter(argv)
    for a in it:
        if a == "--limit":
            limit = int(next(it))
        elif a == "--list":
            listing = True
        else:
            paths.append(a)
    files = []
    for p in paths:
        if os.path.isfile(p):
            files.append(p)
        for root, _, names in os.walk(p):
            files += [os.path.join(root, x) for x in names if x.endswith((".c", ".h"))]
    over = 0
    for path in sorted(files):
        for name, line, length in functions(path):
            if listing:
                print(f"{path}:{line}: {name}: {length} lines")
            elif length > limit:
                print(f"{path}:{line}: {name}: {length} lines (limit {limit})")
                over += 1
    if not listing:
        print(f"{over} function(s) over {limit} lines", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
