"""POSIX regular expressions as pgrep, pkill, killall -r and grep evaluate them.

pgrep compiles its pattern with ``regcomp(REG_EXTENDED | REG_NOSUB [| REG_ICASE])`` and searches
(unanchored) with ``regexec`` in the user's UTF-8 locale (shell-semantics §5, §9). Python's ``re``
reads the same text differently (``\\d`` is a plain ``d`` in ERE, ``[[:digit:]]`` is a class,
``(?i)`` is an error…), so where the C library is glibc we call it through ctypes, under a
thread-local ``C.UTF-8`` locale (:mod:`._glibc_regex`, imported on the first pattern). Elsewhere (macOS, musl) we translate the ERE to Python ``re``
(appendix D, extended to stacked intervals, unclosed brackets and the other corners a random
differential test against glibc found).

Bounds: a pattern is untrusted input (it comes from a transcript), and glibc can be made to eat
the machine by one: ``a{32767}{32767}`` makes ``regcomp`` expand a billion states, and
back-references (``(.*)(.*)\\2\\1x``) make ``regexec`` backtrack for minutes in one C call no
alarm can stop. So before any native call ``pattern_bound`` reads the pattern:

- expanded size over ``MAX_EXPANDED`` (intervals multiplied through their groups): not compiled;
  the answer is None, as for an invalid regex, since pgrep itself cannot compile it either;
- back-references, or a subject long enough that size × length is over ``INLINE_WORK``: the
  match runs in a forked child (``_isolate``) under ``MATCH_TIMEOUT_S`` and a memory cap; a match
  that does not finish there counts as no match, and ``pattern_bound`` says so for the notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Literal

from analyzer.shell import _isolate

__all__ = [
    "MAX_EXPANDED",
    "bre_to_ere",
    "ere_search",
    "ere_span",
    "ere_to_python",
    "glibc_available",
    "pattern_bound",
    "translated_search",
]

_REG_EXTENDED, _REG_ICASE, _REG_NOSUB = 1, 2, 8  # glibc <regex.h> (the BSD values differ)
_CACHE_SIZE = 512
_RE_DUP_MAX = 0x7FFF  # glibc's limit for {m,n}
MAX_EXPANDED = 100_000
"""Atoms a pattern may expand to (``(a{1000}){30}`` is 30,000): glibc compiles that in ms."""
INLINE_WORK = 20_000_000
"""Expanded size × subject length matched in-process; above it the match is isolated."""
MATCH_TIMEOUT_S = 1.0


@cache
def _glibc() -> Callable[[str, str, int], Span] | None:
    """glibc's search (``_glibc_regex.search``), loaded on first use: ctypes and ``find_library``
    cost ~6 ms of CPU to import and ``ldconfig`` ~30 ms of wall time, which a command that
    evaluates no pattern should not pay; None where the C library is not glibc."""
    from analyzer.shell import _glibc_regex

    return _glibc_regex.search if _glibc_regex.load() is not None else None


def glibc_available() -> bool:
    """True when patterns are evaluated by glibc itself rather than by the translator."""
    return _glibc() is not None


def _to_c(text: str) -> bytes:
    # argv strings cannot hold NUL; pgrep never sees anything past one
    return text.encode("utf-8", "replace").split(b"\0", 1)[0]


Span = tuple[int, int] | Literal[False] | None


def _bracket_end(p: str, i: int) -> int:
    """Index of the ``]`` closing the bracket expression at ``p[i] == '['`` (``len(p)`` if none):
    a leading ``]`` (after ``^``) is a member, ``[:alpha:]``/``[.x.]``/``[=x=]`` are skipped whole."""
    n = len(p)
    j = i + 1
    if j < n and p[j] == "^":
        j += 1
    if j < n and p[j] == "]":
        j += 1
    while j < n and p[j] != "]":
        if p[j] == "[" and j + 1 < n and p[j + 1] in ":.=":
            k = p.find(p[j + 1] + "]", j + 2)
            j = k + 2 if k >= 0 else n
        else:
            j += 1
    return j


def pattern_cost(pattern: str, *, basic: bool = False) -> tuple[int, bool]:
    """(expanded size, has back-references) of an ERE (a BRE when ``basic``): one linear pass."""
    if basic:
        try:
            pattern = bre_to_ere(pattern)
        except ValueError:
            return len(pattern), False
    cap = MAX_EXPANDED * 1000
    stack: list[list[int]] = [[0, 0]]  # per open group: [size so far, size of the last atom]
    backref = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        frame = stack[-1]
        if c == "\\" and i + 1 < n:
            backref = backref or pattern[i + 1] in "123456789"
            frame[0] += 1
            frame[1] = 1
            i += 2
            continue
        if c == "[":
            frame[0] += 1
            frame[1] = 1
            i = _bracket_end(pattern, i) + 1
            continue
        if c == "(":
            stack.append([0, 0])
        elif c == ")" and len(stack) > 1:
            size = max(stack.pop()[0], 1)
            stack[-1][0] = min(stack[-1][0] + size, cap)
            stack[-1][1] = size
        elif c == "{":
            m = _INTERVAL.match(pattern, i)
            if m is not None:
                lo, comma, hi = m.group(1), m.group(2), m.group(3)
                times = max(int(hi) if hi else int(lo or 0), int(lo or 0), 1) if comma else max(int(lo or 0), 1)
                times = min(times, cap)
                frame[0] = min(frame[0] + frame[1] * (times - 1), cap)
                frame[1] = min(frame[1] * times, cap)
                i = m.end()
                continue
            frame[0] += 1
            frame[1] = 1
        elif c not in "*+?|^$":
            frame[0] += 1
            frame[1] = 1
        i += 1
    while len(stack) > 1:  # unclosed groups: glibc rejects them, size them anyway
        size = stack.pop()[0]
        stack[-1][0] = min(stack[-1][0] + size, cap)
    return stack[0][0], backref


def pattern_bound(pattern: str, *, basic: bool = False) -> str | None:
    """Which bound of this module applies to ``pattern``, as a sentence for a kill's notes."""
    size, backref = pattern_cost(pattern, basic=basic)
    if size > MAX_EXPANDED:
        return (f"'{pattern[:80]}' expands to more than {MAX_EXPANDED} states: not compiled here (pgrep's "
                "regcomp runs out of memory on it and kills nothing)")
    if backref:
        return (f"'{pattern[:80]}' has back-references, which make matching exponential: each match ran under "
                f"a {MATCH_TIMEOUT_S:g} s deadline, and one that did not finish counts as no match")
    return None


def _bounded(search: Callable[[str, str, int], Span], pattern: str, subject: str, flags: int,
             basic: bool) -> Span:
    """``search`` under the bounds of the module docstring."""
    size, backref = pattern_cost(pattern, basic=basic)
    if size > MAX_EXPANDED:
        return None
    if not backref and size * max(len(subject), 1) <= INLINE_WORK:
        return search(pattern, subject, flags)
    key = (pattern, subject, flags)
    if key in _ISOLATED:
        return _ISOLATED[key]
    got = _isolate.call(search, pattern, subject, flags, timeout=MATCH_TIMEOUT_S)
    span: Span = got.value if got.status == "done" else False
    if got.status == "unavailable" and not backref:
        span = search(pattern, subject, flags)  # no fork: a big but linear match is still finite
    _ISOLATED[key] = span
    if len(_ISOLATED) > _CACHE_SIZE:
        _ISOLATED.pop(next(iter(_ISOLATED)))
    return span


_ISOLATED: dict[tuple[str, str, int], Span] = {}


# ---------------------------------------------------------------- the translator (appendix D)

_CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "punct": "!-/:-@\\[-`{-~", "xdigit": "0-9A-Fa-f",
    "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
}
_INTERVAL = re.compile(r"\{(\d*)(,(\d*))?\}")


class _Items:
    """Translated atoms; a quantifier applies to the last one. POSIX allows stacked quantifiers
    (``a**``, ``a+?``, ``a{2}{3}``), Python does not: we merge them into one repeat where the
    counts stay contiguous (which also spares Python exponential backtracking) and otherwise wrap
    the quantified atom in a group."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.bounds: list[tuple[int, int | None] | None] = []
        """Per item: None for a bare atom, else (min, max) of its repeat (max None = unbounded)."""
        self.bases: list[str] = []

    def atom(self, text: str) -> None:
        self.items.append(text)
        self.bases.append(text)
        self.bounds.append(None)

    def quantify(self, lo: int, hi: int | None) -> None:
        prev = self.bounds[-1]
        if prev is not None:
            merged = _merge_repeats(prev, (lo, hi))
            if merged is None:
                self.bases[-1] = f"(?:{self.items[-1]})"
            else:
                lo, hi = merged
        self.bounds[-1] = (lo, hi)
        self.items[-1] = self.bases[-1] + _repeat(lo, hi)

    def open_group(self) -> None:
        self.atom("(")
        self.bounds[-1] = (-1, -1)  # marks an open group: nothing can quantify it

    def close_group(self) -> None:
        """Fold everything since the matching ``(`` into one atom."""
        k = len(self.items) - 1
        while self.bounds[k] != (-1, -1):
            k -= 1
        group = "(" + "".join(self.items[k + 1 :]) + ")"
        del self.items[k:], self.bases[k:], self.bounds[k:]
        self.atom(group)

    def text(self) -> str:
        return "".join(self.items)


def _repeat(lo: int, hi: int | None) -> str:
    if hi is None:
        return {0: "*", 1: "+"}.get(lo, f"{{{lo},}}")
    if (lo, hi) == (0, 1):
        return "?"
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


def _merge_repeats(inner: tuple[int, int | None], outer: tuple[int, int | None]) -> tuple[int, int | None] | None:
    """(X{inner}){outer} as one X{m,n} when the reachable counts are contiguous, else None."""
    m1, n1 = inner
    m2, n2 = outer
    if n1 is not None and n2 is not None:
        return None  # bounded: wrapping cannot blow up
    if n1 is None:  # X{m1,} repeated j times: counts {0 if m2 == 0} plus [j*m1, inf)
        if m2 >= 1:
            return (m1 * m2, None)
        return (0, None) if m1 <= 1 else None
    if n1 == 0:
        return (0, 0)
    # outer unbounded, inner bounded: intervals [j*m1, j*n1] for j >= m2 are contiguous if m1 <= 1
    if m1 <= 1:
        return (0 if (m1 == 0 or m2 == 0) else m2, None)
    return None


def _bracket(p: str, i: int, icase: bool) -> tuple[str, int]:
    """Translate the bracket expression opening at ``p[i] == '['``; return it and the index after ``]``.

    With ``icase`` glibc folds range ends to upper case first (``[a-[]`` is A..[ and valid)."""
    n = len(p)
    j = i + 1
    negate = False
    if j < n and p[j] == "^":
        negate, j = True, j + 1
    elems: list[str] = []  # Python class fragments
    first = True
    while True:
        if j >= n:
            raise ValueError("unmatched [")
        c = p[j]
        if c == "]" and not first:
            j += 1
            break
        first = False
        if p.startswith("[:", j):
            k = p.find(":]", j + 2)
            if k < 0:
                raise ValueError("unmatched [:")
            name = p[j + 2 : k]
            if name == "word":
                elems.append("a-zA-Z0-9_")
            elif name in _CLASSES:
                elems.append(_CLASSES[name])
            else:
                raise ValueError(f"invalid character class {name!r}")
            j = k + 2
            if j < n and p[j] == "-" and j + 1 < n and p[j + 1] != "]":
                raise ValueError("range from a character class")
            continue
        if p.startswith("[=", j) or p.startswith("[.", j):
            k = p.find(p[j + 1] + "]", j + 2)
            if k < 0:
                raise ValueError("unmatched [= or [.")
            sym = p[j + 2 : k]
            if len(sym) != 1:
                raise ValueError("unsupported collating element")
            lo = sym
            j = k + 2
        else:
            lo = c
            j += 1
        # a range lo-hi, unless the '-' is the last character before ']'
        if j + 1 < n and p[j] == "-" and p[j + 1] != "]":
            if p.startswith("[.", j + 1) or p.startswith("[=", j + 1):
                k = p.find(p[j + 2] + "]", j + 3)
                if k < 0:
                    raise ValueError("unmatched [.")
                hi = p[j + 3 : k]
                if len(hi) != 1:
                    raise ValueError("unsupported collating element")
                j = k + 2
            elif p.startswith("[:", j + 1):
                raise ValueError("range to a character class")
            else:
                hi = p[j + 1]
                j += 2
            if icase and lo.isascii() and hi.isascii():
                lo, hi = lo.upper(), hi.upper()
            if ord(hi) < ord(lo):
                raise ValueError("invalid range end")
            elems.append(f"{re.escape(lo)}-{re.escape(hi)}")
        else:
            elems.append(re.escape(lo) if lo != "-" else "\\-")
    body = "".join(elems)
    if not body:
        raise ValueError("empty bracket expression")
    return ("[^" if negate else "[") + body + "]", j


def ere_to_python(p: str, icase: bool = False) -> str:
    """Translate a POSIX ERE (glibc flavour) to an equivalent Python regex for *search* semantics.

    Raises ValueError where glibc's ``regcomp`` fails, so pgrep would exit 2. ``icase`` mirrors how
    glibc's REG_ICASE treats escaped letters and range ends (measured against glibc 2.36)."""
    out = _Items()
    i, n = 0, len(p)
    can_repeat = False  # a quantifier needs a preceding atom that is not an anchor or '(' / '|'
    depth = 0
    while i < n:
        c = p[i]
        if c in "*+?" or (c == "{" and _INTERVAL.match(p, i)):
            if not can_repeat:
                raise ValueError("repetition of nothing")
            if c == "{":
                m = _INTERVAL.match(p, i)
                assert m is not None
                lo, comma, hi = m.group(1), m.group(2), m.group(3)
                if not lo and not comma:
                    raise ValueError("empty interval")
                if (lo and int(lo) > _RE_DUP_MAX) or (hi and int(hi) > _RE_DUP_MAX):
                    raise ValueError("interval too large")
                if lo and hi and int(hi) < int(lo):
                    raise ValueError("invalid interval")
                out.quantify(int(lo or 0), (int(hi) if hi else None) if comma else int(lo))
                i = m.end()
            else:
                out.quantify(*{"*": (0, None), "+": (1, None), "?": (0, 1)}[c])
                i += 1
            continue
        if c == "{":
            raise ValueError("invalid interval")
        can_repeat = True
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("trailing backslash")
            nx = p[i + 1]
            i += 2
            if nx in "wWsS":
                out.atom("\\" + nx)
            elif nx == "b":
                out.atom("\\b")
                can_repeat = False
            elif nx == "B":
                out.atom(r"(?:\B|\A\Z)")  # glibc: \B holds in the empty string, Python's does not
                can_repeat = False
            elif nx == "<":
                out.atom(r"\b(?=\w)")
                can_repeat = False
            elif nx == ">":
                out.atom(r"\b(?<=\w)")
                can_repeat = False
            elif nx == "`":
                out.atom(r"\A")
                can_repeat = False
            elif nx == "'":
                out.atom(r"\Z")
                can_repeat = False
            elif nx.isdigit() and nx != "0":
                out.atom("\\" + nx)  # back-reference (glibc extension)
            elif icase and nx.isascii() and nx.islower():
                # glibc REG_ICASE compares an escaped character unfolded against the folded
                # (upper-case) subject, so an escaped lower-case letter never matches
                out.atom("(?!)")
            else:
                out.atom(re.escape(nx))  # \d -> d, \. -> . : the next character, literally
        elif c == "[":
            cls, i = _bracket(p, i, icase)
            out.atom(cls)
        elif c == "(":
            depth += 1
            out.open_group()
            can_repeat = False
            i += 1
        elif c == ")":
            if depth == 0:
                out.atom(r"\)")  # glibc ERE: an unmatched ) is a literal
            else:
                depth -= 1
                out.close_group()
            i += 1
        elif c == "|":
            out.atom("|")
            can_repeat = False
            i += 1
        elif c == "^":
            out.atom("^")
            can_repeat = False
            i += 1
        elif c == "$":
            out.atom("$")
            i += 1
        elif c == ".":
            out.atom(".")
            i += 1
        else:
            out.atom(re.escape(c))
            i += 1
    if depth:
        raise ValueError("unmatched (")
    return out.text()


def bre_to_ere(p: str) -> str:
    """Rewrite a POSIX BRE (grep's default dialect, with the GNU ``\\+ \\? \\|`` extensions) as an ERE.

    Used only where glibc is absent (with glibc, BREs go to ``regcomp`` as they are). Raises
    ValueError for an unmatched ``\\)``, which glibc rejects in a BRE."""
    out: list[str] = []
    i, n = 0, len(p)
    start = True  # at the start of the RE or just after \( or \|: '*' \+ \? are literal, '^' an anchor
    depth = 0
    while i < n:
        c = p[i]
        if c == "\\" and i + 1 < n:
            nx = p[i + 1]
            if nx in "+?" and start:
                out.append("\\" + nx)
            elif nx in "(){}|+?":
                if nx == "(":
                    depth += 1
                elif nx == ")":
                    if depth == 0:
                        raise ValueError("unmatched \\)")
                    depth -= 1
                out.append(nx)
                start = nx in "(|"
                i += 2
                continue
            else:
                out.append("\\" + nx)
            start = nx in "<>bB`'"  # a repeat after an anchor is a literal in a BRE
            i += 2
            continue
        if c == "[":
            j = _bracket_end(p, i)
            out.append(p[i : j + 1])
            i = j + 1
            start = False
            continue
        if c == "*" and start:
            out.append("\\*")
        elif c == "^" and (not start or (i > 0 and p[i - 1] == "^")):
            out.append("\\^")
        elif c == "$" and not (i + 1 == n or p.startswith("\\)", i + 1) or p.startswith("\\|", i + 1)):
            out.append("\\$")
        elif c in "(){}|+?":
            out.append("\\" + c)
        else:
            out.append(c)
        start = c == "^" and start
        i += 1
    return "".join(out)


_PY_CACHE: dict[tuple[str, bool], re.Pattern[str] | None] = {}


def _compile_translated(pattern: str, icase: bool) -> re.Pattern[str] | None:
    key = (pattern, icase)
    if key not in _PY_CACHE:
        try:
            flags = re.DOTALL | (re.IGNORECASE if icase else 0)
            _PY_CACHE[key] = re.compile(ere_to_python(pattern, icase), flags)
        except (ValueError, re.error, OverflowError, RecursionError):
            _PY_CACHE[key] = None
        if len(_PY_CACHE) > 4 * _CACHE_SIZE:
            _PY_CACHE.pop(next(iter(_PY_CACHE)))
    return _PY_CACHE[key]


def translated_search(pattern: str, subject: str, *, icase: bool = False) -> tuple[int, int] | Literal[False] | None:
    """The translator's answer, whatever libc is present (for tests and non-glibc hosts)."""
    return _bounded(_translated, pattern, subject, _REG_ICASE if icase else 0, False)


def _translated(pattern: str, subject: str, flags: int) -> Span:
    icase = bool(flags & _REG_ICASE)
    rx = _compile_translated(pattern, icase)
    if rx is None:
        return None
    m = rx.search(subject)
    return (m.start(), m.end()) if m else False


def ere_span(
    pattern: str, subject: str, *, icase: bool = False, exact: bool = False, basic: bool = False,
) -> tuple[int, int] | Literal[False] | None:
    """Where ``pattern`` first matches ``subject``: ``(start, end)``, False for no match, None when
    the pattern is not a valid regex (pgrep would exit 2 and signal nothing).

    ``exact`` wraps the pattern as pgrep ``-x`` does (``^(P)$``); ``basic`` reads it as a BRE (grep
    without ``-E``)."""
    flags = _REG_ICASE if icase else 0
    glibc = _glibc()
    if basic and glibc is not None:
        return _bounded(glibc, f"^\\({pattern}\\)$" if exact else pattern, subject, flags, True)
    if basic:
        try:
            pattern = bre_to_ere(pattern)
        except ValueError:
            return None
    if exact:
        pattern = f"^({pattern})$"
    if glibc is not None:
        return _bounded(glibc, pattern, subject, _REG_EXTENDED | flags, False)
    return translated_search(pattern, subject, icase=icase)


def ere_search(pattern: str, subject: str, *, icase: bool = False, exact: bool = False) -> bool | None:
    """Does ``pattern`` (POSIX ERE, glibc flavour) match anywhere in ``subject``, as ``pgrep`` decides?

    None means the regex is invalid: pgrep exits 2 and kills nothing."""
    got = ere_span(pattern, subject, icase=icase, exact=exact)
    return None if got is None else got is not False
