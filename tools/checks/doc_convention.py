#!/usr/bin/env python3
"""Check the public headers' documentation and error convention mechanically.

Usage: doc_convention.py [--list] INCLUDE_DIR

Reads every *.h in INCLUDE_DIR (include/ballast) and checks, per STYLE.md
("the public header is the authoritative spec", "one error convention") and
the convention written at the top of ballast.h (section Errors):

  1. every public function (a BALLAST_API declaration or a static inline
     definition) has a doc comment (/** ... */ or /*! ... */ right before it,
     or /**< ... */ right after it);
  2. every function returning an integer (int, int64_t, long) says what it
     means: its doc comment has a return clause (\\return, @return, \\retval
     or a sentence with "Returns"/"returns") that names 0 or success and at
     least one BALLAST_E* code (a status), or states another meaning (a
     count, a boolean, an index, ...), or refers to the call whose codes it
     shares ("\\return as f()"), which must pass in turn; a bare -1 (a
     sentinel, not a BALLAST_E* code) fails, and so does answering NULL with
     0 or -1 ("0 for NULL": NULL is BALLAST_EINVAL);
  3. every BALLAST_E* name a doc comment mentions is in the error list
     (BALLAST_ERRNO_MAP of common.h);
  4. no public function returns a floating-point value: such a result comes
     through an output pointer and the call returns an int status;
  5. a function returning a pointer, with parameters, says what it returns
     for a bad argument (NULL, or a placeholder name such as "unknown");
  6. output parameters come last: once a parameter is an output (a non-const
     pointer named out or out_*, or whose \\param text starts with
     "receives", "where to write", "overwritten", ...), no input follows.

ALLOWED below may name a function allowed to break rule 2, with the reason;
it is empty, and the test fails when an entry passes or no longer exists,
so an exception cannot outlive its reason.
Prints one line per problem as "file:line: function: problem" and exits 1
when there is one. --list prints every function found with its verdict.
"""
import os
import re
import sys

# Functions allowed to break rule 2, each with why (none: every accessor
# follows ballast.h's one error convention since issue 28).
ALLOWED = {
}

# Integer returns whose meaning rule 2 checks: int, and the wider integers
# that carry counts or indices the same way.
INT_TYPES = ("int", "int64_t", "long", "long long")
STATUS_WORDS = re.compile(r"\b0\b|success|succeeds", re.I)
# What a non-status int may mean, said in its return clause.
MEANING_WORDS = re.compile(
    r"\b(number|count|counts|how many|boolean|true|false|non-?zero|1 when|1 if|"
    r"1 for|index|rank|id|size|level|depth|length|bytes|value|verdict|"
    r"MPI_SUCCESS|MPI's|MPI error)\b", re.I)
BLOCK_CMD = re.compile(r"[\\@](brief|param|return|returns|retval|note|see|sa|warning|"
                       r"par|pre|post|code|endcode|details|file|ingroup|defgroup|"
                       r"addtogroup|section|subsection|deprecated|since|throws)\b")


def strip_comments(text):
    """Comments blanked (newlines kept) and the list of (start, end, body)."""
    out, comments = [], []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            comments.append((i, j, text[i:j]))
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((i, j, text[i:j]))
            out.append(" " * (j - i))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out), comments


def is_doc(body):
    return body.startswith("/**") and not body.startswith("/***") or body.startswith("/*!")


def doc_text(body):
    body = re.sub(r"^/\*[*!]<?", "", body)
    body = re.sub(r"\*/$", "", body)
    lines = [re.sub(r"^\s*\*(?!/)", "", l) for l in body.splitlines()]
    return " ".join(" ".join(lines).split())


def return_clause(doc):
    """The parts of a doc comment that say what the function returns."""
    parts = []
    for m in re.finditer(r"[\\@](returns?|retval)\b", doc):
        rest = doc[m.end():]
        nxt = BLOCK_CMD.search(rest)
        parts.append(rest[:nxt.start()] if nxt else rest)
    for m in re.finditer(r"\b(Returns|returns|Return value|returning|answers)\b", doc):
        rest = doc[m.start():]
        nxt = BLOCK_CMD.search(rest, 1)
        parts.append(rest[:nxt.start()] if nxt else rest)
    return " ".join(parts)


def error_codes(include_dir):
    with open(os.path.join(include_dir, "common.h")) as f:
        text = f.read()
    m = re.search(r"#define BALLAST_ERRNO_MAP\(X\)(.*?)\n\s*\n", text, re.S)
    if not m:
        raise SystemExit("doc_convention: no BALLAST_ERRNO_MAP in common.h")
    return {"BALLAST_" + n for n in re.findall(r"X\(\s*(E\w+)\s*,", m.group(1))}


def functions(path, with_params=False):
    """Yield (line, name, return type, doc text or None) per public function;
    with_params: also its parameters, a list of (type, name)."""
    with open(path) as f:
        text = f.read()
    code, comments = strip_comments(text)
    # cresta.h's attribute line before a wrapper is not code between the doc
    # comment and the declaration: blanked (same length, lines kept).
    code = re.sub(r'\bBALLAST_DEPRECATED\("[^"\n]*"\)',
                  lambda m: " " * len(m.group(0)), code)
    decl_re = re.compile(
        r"(?:\bBALLAST_API\s+|^[ \t]*static\s+inline\s+)([^;{}()]*?)\b([A-Za-z_]\w*)\s*\(",
        re.M)
    for m in decl_re.finditer(code):
        start = m.start()
        line_start = code.rfind("\n", 0, start) + 1
        if code[line_start:start].lstrip().startswith("#"):
            continue
        # The declaration ends at its ';' or its body's '{'.
        end = min([p for p in (code.find(";", m.end()), code.find("{", m.end())) if p >= 0])
        doc = None
        before = [c for c in comments if c[1] <= start]
        if before:
            c = before[-1]
            gap = code[c[1]:start]
            # Only blanks, or a line-start preprocessor line, between the
            # comment and the declaration.
            if is_doc(c[2]) and not c[2].startswith("/**<") and \
                    re.fullmatch(r"(\s|#[^\n]*\n)*", gap):
                doc = doc_text(c[2])
        if doc is None:
            after = [c for c in comments if c[0] >= end]
            if after and after[0][2].startswith("/**<") and \
                    re.fullmatch(r"[;{\s]*", code[end:after[0][0]]):
                doc = doc_text(after[0][2])
        rtype = " ".join(m.group(1).split())
        row = (text.count("\n", 0, start) + 1, m.group(2), rtype, doc)
        yield row + (parameters(code, m.end() - 1),) if with_params else row


def parameters(code, i):
    """The parameters of the declaration whose '(' is at code[i]: a list of
    (type, name); a function-pointer parameter is named by its (*name)."""
    depth, j, parts, cur = 0, i, [], i + 1
    while j < len(code):
        c = code[j]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                parts.append(code[cur:j])
                break
        elif c == "," and depth == 1:
            parts.append(code[cur:j])
            cur = j + 1
        j += 1
    out = []
    for p in parts:
        p = " ".join(p.split())
        if not p or p == "void" or p == "...":
            continue
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", p)
        if fp:
            out.append((p, fp.group(1)))
            continue
        m = re.match(r"(.*?)(\w+)\s*(\[[^]]*\])?$", p)
        out.append((m.group(1).strip(), m.group(2)) if m else (p, ""))
    return out


OUT_DOC = re.compile(r"^(receives|where to write|overwritten|is filled|filled with|"
                     r"the record to add into|room for)", re.I)


def is_output(ptype, name, doc):
    """An output parameter: a pointer the call writes its result through,
    by name (out, out_*) or by its \\param text ("receives ...")."""
    if "*" not in ptype or ptype.startswith("const ") or "(*" in ptype:
        return False
    if name == "out" or name.startswith("out_"):
        return True
    m = re.search(r"[\\@]param\s+%s\s+(.*?)(?=[\\@]\w+|$)" % re.escape(name), doc or "")
    return bool(m and OUT_DOC.search(m.group(1).strip()))


def check_shape(name, rtype, doc, params):
    """The problems of a declaration's shape under ballast.h's convention
    (section Errors), each a string."""
    problems = []
    if rtype in ("double", "float", "long double"):
        problems.append("returns %s: a result that is not a non-negative integer "
                        "comes through an output pointer, last, and the call "
                        "returns an int status (ballast.h, Errors)" % rtype)
    if rtype.endswith("*") and params and doc is not None and \
            not re.search(r"\bNULL\b|\"(?:[A-Z_]*_)?unknown", doc, re.I):
        problems.append("returns a pointer but its doc comment does not say what "
                        "it returns for a bad argument (NULL, or a placeholder "
                        "name)")
    if rtype in INT_TYPES and re.search(r"\b0 for NULL\b|-1 for NULL", doc or ""):
        problems.append("answers NULL with a value that is not BALLAST_EINVAL")
    seen_out = None
    for ptype, pname in params:
        if is_output(ptype, pname, doc):
            seen_out = seen_out or pname
        elif seen_out:
            problems.append("input parameter %s comes after output parameter %s: "
                            "outputs are the last parameters" % (pname, seen_out))
            break
    return problems


DELEGATE = re.compile(r"\b(?:as|of|same as)\s+([a-z_]\w*)\(\)|\b([a-z_]\w*)\(\)'s codes")
ALIAS = re.compile(r"old (?:name|form) of ([a-z_]\w*)\(\)")
SENTINEL = re.compile(r"(?<![\w-])-1\b")


def delegate(doc, ret):
    """The function whose return convention this one shares, or None: its
    return clause says "as f()" / "f()'s codes", or it is a deprecated alias
    ("old name of f()") that behaves exactly as f."""
    m = DELEGATE.search(ret)
    if m:
        return m.group(1) or m.group(2)
    m = ALIAS.search(doc)
    if m and not ret.strip():
        return m.group(1)
    return None


def check_int(doc, ret, rtype):
    """The problem with an int function's doc comment, or None."""
    if not ret.strip():
        return "returns %s but its doc comment has no return clause (\\return ...)" % rtype
    if SENTINEL.search(ret) and not re.search(r"BALLAST_E[A-Z]", ret):
        return ("returns -1 as a sentinel rather than a BALLAST_E* code (one error "
                "convention, STYLE.md)")
    if re.search(r"BALLAST_E[A-Z]", ret):
        if not (STATUS_WORDS.search(ret) or MEANING_WORDS.search(ret)):
            return ("its return clause names BALLAST_E* codes but not what a "
                    "non-negative value means (0 / success, a count, ...)")
        return None
    if MEANING_WORDS.search(ret):
        return None
    if STATUS_WORDS.search(ret) and re.search(r"cannot fail|never fails", ret):
        return None
    if STATUS_WORDS.search(ret):
        return ("its return clause gives 0 but no BALLAST_E* code: say which codes "
                "it returns, or that it cannot fail")
    return ("its return clause names neither 0/success with a BALLAST_E* code "
            "nor another meaning (count, boolean, index, ...)")


def main(argv):
    args = [a for a in argv[1:] if a != "--list"]
    listing = "--list" in argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    include_dir = args[0]
    codes = error_codes(include_dir)
    not_codes = {"BALLAST_ERRNO_MAP", "BALLAST_ERRNO_MIN_", "BALLAST_ERR_ENUM_"}
    problems, seen, nfun, found = [], set(), 0, []
    for fname in sorted(os.listdir(include_dir)):
        if not fname.endswith(".h"):
            continue
        path = os.path.join(include_dir, fname)
        rel = "include/ballast/" + fname
        with open(path) as f:
            _, comments = strip_comments(f.read())
        with open(path) as f:
            text = f.read()
        for start, _, body in comments:
            if not is_doc(body):
                continue
            for name in re.findall(r"\bBALLAST_E[A-Z][A-Z0-9_]*", body):
                if name not in codes and name not in not_codes:
                    line = text.count("\n", 0, start) + 1
                    problems.append("%s:%d: a doc comment names %s, which is not in "
                                    "BALLAST_ERRNO_MAP (common.h)" % (rel, line, name))
        for line, name, rtype, doc, params in functions(path, with_params=True):
            found.append((rel, line, name, rtype, doc))
            for p in check_shape(name, rtype, doc, params):
                problems.append("%s:%d: %s: %s" % (rel, line, name, p))
    ints = {f[2]: f for f in found if f[3] in INT_TYPES}
    verdicts = {}

    def verdict_of(name, depth=0):
        rel, line, _, rtype, doc = ints[name]
        if name in verdicts:
            return verdicts[name]
        if doc is None:
            v = "has no doc comment"
        else:
            ret = return_clause(doc)
            target = delegate(doc, ret)
            if target and target != name and depth < 8:
                if target not in ints:
                    v = "refers its return codes to %s(), which is no public int function" % target
                else:
                    tv = verdict_of(target, depth + 1)
                    v = "refers its return codes to %s(), which fails: %s" % (target, tv) \
                        if tv and target not in ALLOWED else None
            else:
                v = check_int(doc, ret, ints[name][3])
        verdicts[name] = v
        return v

    for rel, line, name, rtype, doc in found:
        nfun += 1
        seen.add(name)
        if rtype in INT_TYPES:
            verdict = verdict_of(name)
        else:
            verdict = None if doc is not None else "has no doc comment"
        if verdict and name in ALLOWED:
            verdict = None
        elif not verdict and name in ALLOWED:
            problems.append("%s:%d: %s: passes now; remove it from ALLOWED in "
                            "tools/checks/doc_convention.py" % (rel, line, name))
        if listing:
            print("%s:%d: %s %s: %s" % (rel, line, rtype, name,
                                        verdict or ("allowed: " + ALLOWED[name]
                                                    if name in ALLOWED else "ok")))
        if verdict:
            problems.append("%s:%d: %s: %s" % (rel, line, name, verdict))
    for name in sorted(set(ALLOWED) - seen):
        problems.append("ALLOWED names %s, which no public header declares any more: "
                        "remove it from tools/checks/doc_convention.py" % name)
    for p in problems:
        print(p)
    if nfun == 0:
        print("doc_convention: no public function found in %s" % include_dir)
        return 1
    print("doc_convention: %d public functions, %d problem(s)" % (nfun, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
