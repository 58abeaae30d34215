"""Quote removal as bash does it, for the pieces a word is made of (shell-semantics §4 step 1)."""

from __future__ import annotations

import re

_WORD_ESC = re.compile(r"\\(\n|.)", re.DOTALL)
_DQ_ESC = re.compile(r"\\([$`\"\\\n])")
_HEREDOC_ESC = re.compile(r"\\([$`\\\n])")
_GLOB = re.compile(r"[*?]|\[[^\]]*\]|\{[^{}]*(,|\.\.)[^{}]*\}|^~")
_ANSI = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
    re.DOTALL,
)
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}


def unescape_word(s: str) -> str:
    """An unquoted word: ``\\⏎`` disappears, ``\\x`` is ``x``."""
    if "\\" not in s:
        return s
    return _WORD_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), s)


def unescape_dq(s: str) -> str:
    """Inside double quotes only ``\\$ \\` \\" \\\\ \\⏎`` are escapes; other backslashes stay."""
    if "\\" not in s:
        return s
    return _DQ_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), s)


def unescape_heredoc(s: str) -> str:
    """The body of a heredoc with an unquoted delimiter, as the command reads it (expansions
    left as text): ``\\$ \\` \\\\`` lose their backslash and ``\\⏎`` joins lines."""
    if "\\" not in s:
        return s
    return _HEREDOC_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), s)


def _ansi_char(m: re.Match[str]) -> str:
    hx, u4, u8, octal, ctrl, other = m.groups()
    try:
        if hx is not None:
            return chr(int(hx, 16))
        if u4 is not None:
            return chr(int(u4, 16))
        if u8 is not None:
            return chr(min(int(u8, 16), 0x10FFFF))
        if octal is not None:
            return chr(int(octal, 8) & 0xFF)
    except ValueError:
        return m.group(0)
    if ctrl is not None:
        return chr(ord(ctrl) & 0x1F)
    return _ANSI_SIMPLE.get(other, "\\" + other)


def decode_ansi_c(body: str) -> str:
    """The inside of ``$'…'``."""
    if "\\" not in body:
        return body
    return _ANSI.sub(_ansi_char, body)


def has_glob(unquoted: str) -> bool:
    """An unquoted piece of a word that bash would expand (glob, brace, tilde)."""
    return bool(_GLOB.search(unquoted))
