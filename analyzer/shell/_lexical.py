"""The last-resort reading of a command: a linear, quote-aware split into simple commands.

Used where a real parse is refused by a bound (``_levels``: nesting deeper than the converters
follow, a text whose tree-sitter parse ran out of its memory or time budget): every command in
the text is kept, flat, so a ``kill`` hidden under 61 subshells or behind a parser bomb is still
seen. What it cannot know, it does not claim: no contexts, no pipelines (a ``|`` only separates),
no heredoc bodies (their lines read as commands, so the level is ``truncated``, never ``ok``).

One pass over the text, no recursion, no regex backtracking: time and memory are linear.
"""

from __future__ import annotations

from analyzer.shell._ast import Cmd, Seq, Word

# unquoted, these end a simple command; `(`/`)`/`{`/`}`/backtick/`$(` open or close a nested list
_BREAKS = frozenset(";&|\n()`")
_KEYWORDS = frozenset({
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac", "in",
    "select", "function", "{", "}", "!", "time", "coproc",
})


def seq(text: str, offset: int = 0) -> Seq:
    """Every simple command in ``text`` as one flat sequence; offsets are shifted by ``offset``
    (the position of ``text`` in the parsed level)."""
    out = Seq()
    words: list[Word] = []
    buf: list[str] = []
    raw_start = -1
    dynamic = quoted = False
    skip_target = False  # the word after a redirect operator is its target, not an argument
    quote: str | None = None
    i, n = 0, len(text)

    def end_word(at: int) -> None:
        nonlocal raw_start, dynamic, quoted, skip_target
        if raw_start >= 0 and skip_target:
            skip_target = False
        elif raw_start >= 0:
            raw = text[raw_start:at]
            words.append(Word(text="".join(buf), raw=raw, start=offset + raw_start, end=offset + at,
                              dynamic=dynamic, quoted=quoted))
        buf.clear()
        raw_start, dynamic, quoted = -1, False, False

    def end_command() -> None:
        while words and words[0].raw in _KEYWORDS and not words[0].quoted:
            words.pop(0)
        if words:
            out.items.append(Cmd(words=list(words), start=words[0].start, end=words[-1].end))
            out.seps.append(";")
        words.clear()

    while i < n:
        ch = text[i]
        if quote == "'":
            if ch == "'":
                quote = None
            else:
                buf.append(ch)
            i += 1
            continue
        if quote == '"':
            if ch == '"':
                quote = None
            elif ch == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
                if text[i + 1] != "\n":
                    buf.append(text[i + 1])
                i += 1
            else:
                dynamic = dynamic or ch in "$`"
                buf.append(ch)
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if raw_start < 0:
                raw_start = i
            if text[i + 1] != "\n":
                buf.append(text[i + 1])
            quoted = True
            i += 2
            continue
        if ch in "'\"":
            if raw_start < 0:
                raw_start = i
            quote, quoted = ch, True
            i += 1
            continue
        if ch == "$" and i + 1 < n and text[i + 1] == "(":
            end_word(i)
            end_command()
            i += 2
            continue
        if ch in "<>":
            if raw_start >= 0 and text[raw_start:i].isdigit():  # `2>&1`: the fd is not a word
                raw_start = -1
                buf.clear()
            end_word(i)
            while i < n and text[i] in "<>&|-":
                i += 1
            skip_target = True
            continue
        if ch in _BREAKS or ch in " \t\r":
            end_word(i)
            if ch in _BREAKS:
                end_command()
            i += 1
            continue
        if raw_start < 0:
            raw_start = i
        dynamic = dynamic or ch in "$*?["
        buf.append(ch)
        i += 1
    end_word(n)
    end_command()
    if out.seps:
        out.seps[-1] = ""
    return out
