"""Reads a user message for server-lifecycle evidence: readiness, instructions, corrections.

``read_message("Restart sglang to serve on *:30001")`` says the user asks for a restart and that the
restart names sglang and port 30001. The reader is rule-based: ``spacy.blank("en")`` (tokenizer only,
never a downloaded model) plus one ``Matcher`` of cue phrases, one ``PhraseMatcher`` of server kinds
and regexes for ports, hosts and units (``_patterns.py``). A cue becomes an intent only after its
context is checked: negation ("don't restart it" is ``hold``), questions ("is it up?" is
``question``), the subject ("I'm ready" is not server readiness), the object ("restart the test
suite" is no server) and conditions ("if it crashes, restart it": the crash is no state).

Limits, on purpose:

- Text the user pasted is not read: fenced code blocks, harness blocks (``<task-notification>``…),
  machine-looking lines (timestamps, log levels, tracebacks, prompts, tables, JSON), runs of two or
  more code-looking or indented lines, lines a server prints when it is up ("Application startup
  complete"), the tail of a prose line from an inline log marker (``ERROR:``, a timestamp) on, and
  double-quoted strings. A single unfenced code line inside prose is still read. Each skipped part
  is listed in ``MessageReading.skipped``.
- Messages longer than ``MAX_ANALYSED_CHARS`` are read at the head and the tail only (instructions
  come first or last); ``truncated`` says so. Entities in the unread middle are not reported.
- Sentences are split on punctuation and newlines, clauses on commas, conjunctions and
  conditionals. There is no parser: a subject or object is found by scanning a few words.
- Pronouns are resolved one way only: an instruction about ``it``/``them`` is dropped when the
  clause just before it, in the same sentence, names something that is not a server and no
  server ("the notebook kernel died, can you restart it?"). Across sentences ``it`` is taken as a
  server.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from analyzer.lifecycle import _patterns as P
from analyzer.lifecycle._spacy import import_spacy

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.matcher import Matcher, PhraseMatcher
    from spacy.tokens import Doc, Token

# spaCy takes most of a second to import: it is imported when the first message is read
# (``_build_pipeline``), so commands and sessions that read no message never pay for it.

MAX_ANALYSED_CHARS: Final = 6000
"""Longer messages are read at the first ``HEAD_CHARS`` and last ``TAIL_CHARS`` characters."""
HEAD_CHARS: Final = 4000
TAIL_CHARS: Final = 1500
CACHE_SIZE: Final = 50_000
"""Distinct texts remembered; the memo is emptied when it is full."""


class Intent(StrEnum):
    """What a user message says or asks about a server."""

    ready = "ready"
    not_ready = "not_ready"
    launch = "launch"
    stop = "stop"
    restart = "restart"
    correction = "correction"
    hold = "hold"
    question = "question"


INSTRUCTIONS: Final = frozenset({Intent.launch, Intent.stop, Intent.restart, Intent.hold})


class EntityLabel(StrEnum):
    port = "port"
    host = "host"
    kind = "kind"
    unit = "unit"


@dataclass(frozen=True, slots=True)
class Evidence:
    """Words of the message (character span into the original text) that a reading rests on."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Entity:
    """A server reference in the message."""

    label: EntityLabel
    value: str
    """Normalised: the port number, a lowercase host, a canonical kind, or the unit name."""
    start: int
    end: int
    text: str
    """The words as written (``*:30001``, ``port 8000``, ``root@10.1.2.3``)."""
    kind: str | None = None
    """For a unit named after a server kind (``sglang-k26-ddtree``), that kind."""


@dataclass(frozen=True, slots=True)
class Target:
    """The server(s) one intent is about, from the entities in its clause."""

    kinds: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    hosts: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    mention: str | None = None
    """How the message names it when no entity does ("it", "the server", "the old one")."""
    text: str = ""
    """The target as written: its entities' words ("sglang *:30001") or the mention; "" if none."""

    @property
    def unspecified(self) -> bool:
        """True when no kind, port, host or unit is named ("restart it")."""
        return not (self.kinds or self.ports or self.hosts or self.units)


@dataclass(frozen=True, slots=True)
class IntentHit:
    """One occurrence of an intent in a message."""

    intent: Intent
    strength: float
    """0..1: how plainly the words say it (a bare "Ready" 0.9; "maybe restart it?" 0.7)."""
    evidence: tuple[Evidence, ...]
    target: Target


@dataclass(frozen=True, slots=True)
class Skipped:
    """A part of the message that was not read, and why."""

    start: int
    end: int
    reason: str
    """``code-fence``, ``harness``, ``log``, ``paste``, ``quote`` or ``length-cap``."""


@dataclass(frozen=True, slots=True)
class MessageReading:
    """What one user message says about servers."""

    intents: frozenset[Intent]
    hits: tuple[IntentHit, ...]
    entities: tuple[Entity, ...]
    skipped: tuple[Skipped, ...] = ()
    truncated: bool = False
    """True when the message was longer than ``MAX_ANALYSED_CHARS`` and its middle was not read."""

    def has(self, intent: Intent | str) -> bool:
        return Intent(intent) in self.intents

    @property
    def confidence(self) -> dict[Intent, float]:
        """The strongest hit per intent."""
        out: dict[Intent, float] = {}
        for hit in self.hits:
            out[hit.intent] = max(out.get(hit.intent, 0.0), hit.strength)
        return out

    @property
    def targets(self) -> dict[Intent, tuple[Target, ...]]:
        """The servers each intent is about, one target per hit."""
        out: dict[Intent, list[Target]] = {}
        for hit in self.hits:
            out.setdefault(hit.intent, []).append(hit.target)
        return {intent: tuple(ts) for intent, ts in out.items()}

    def evidence(self, intent: Intent | str) -> tuple[Evidence, ...]:
        wanted = Intent(intent)
        return tuple(ev for hit in self.hits if hit.intent == wanted for ev in hit.evidence)

    def quote(self, intent: Intent | str) -> str:
        """The words behind an intent, for a report ("" when the message does not carry it)."""
        return " … ".join(dict.fromkeys(ev.text for ev in self.evidence(intent)))

    def _values(self, label: EntityLabel) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.value for e in self.entities if e.label == label))

    @property
    def ports(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self._values(EntityLabel.port))

    @property
    def kinds(self) -> tuple[str, ...]:
        return self._values(EntityLabel.kind)

    @property
    def hosts(self) -> tuple[str, ...]:
        return self._values(EntityLabel.host)

    @property
    def units(self) -> tuple[str, ...]:
        return self._values(EntityLabel.unit)


# --- public API ---------------------------------------------------------------------------------------

_CACHE: dict[str, MessageReading] = {}


def read_message(text: str) -> MessageReading:
    """Read one user message (memoised per distinct text)."""
    hit = _CACHE.get(text)
    if hit is not None:
        return hit
    return read_messages([text])[0]


def read_messages(texts: Iterable[str]) -> list[MessageReading]:
    """Read many messages, in order, tokenizing the new ones in one ``nlp.pipe`` batch."""
    wanted = list(texts)
    found: dict[str, MessageReading] = {}
    missing: list[str] = []
    for text in dict.fromkeys(wanted):
        cached = _CACHE.get(text)
        if cached is None:
            missing.append(text)
        else:
            found[text] = cached
    if missing:
        pipe = _pipeline()
        prepared = [_prepare(text) for text in missing]
        docs = pipe.nlp.pipe(prep.compact for prep in prepared)
        for text, prep, doc in zip(missing, prepared, docs, strict=True):
            reading = _Reader(pipe, text, prep, doc).read()
            found[text] = reading
            if len(_CACHE) >= CACHE_SIZE:
                _CACHE.clear()
            _CACHE[text] = reading
    return [found[text] for text in wanted]


def clear_cache() -> None:
    """Forget memoised readings (tests, long-running batch workers)."""
    _CACHE.clear()


# --- the spaCy pipeline (built once per process) -----------------------------------------------------


@dataclass(slots=True)
class _Pipeline:
    nlp: Language
    cues: Matcher
    """Cue patterns with wildcards ("bring … up", "leave … alone")."""
    phrases: PhraseMatcher
    """Every other cue pattern, expanded to its fixed word sequences."""
    kinds: PhraseMatcher
    verb_forms: dict[str, tuple[str, str]]
    wild_first: frozenset[str]
    """First words of the Matcher's patterns: a message with none of them skips the Matcher."""
    filter_spans: Any
    """``spacy.util.filter_spans``, kept here so the module imports spaCy only with the pipeline."""


_PIPELINE: _Pipeline | None = None


def _pipeline() -> _Pipeline:
    global _PIPELINE
    if _PIPELINE is None:
        _PIPELINE = _build_pipeline()
    return _PIPELINE


def _build_pipeline() -> _Pipeline:
    import_spacy()
    from spacy.lang.en import English
    from spacy.matcher import Matcher, PhraseMatcher
    from spacy.tokenizer import Tokenizer
    from spacy.tokens import Doc
    from spacy.util import filter_spans

    # spacy.blank("en") whose tokenizer keeps identifiers like sglang-k26-ddtree, llama.cpp and
    # vllm.service one token: token_match set in the language's Defaults, not on the built tokenizer,
    # which would load all its special cases a second time (~60 ms)
    defaults = type("Defaults", (English.Defaults,), {"token_match": P.IDENT_TOKEN.fullmatch})
    nlp: Language = type("BlankEnglish", (English,), {"Defaults": defaults})()
    assert isinstance(nlp.tokenizer, Tokenizer) and nlp.tokenizer.token_match is not None
    cues = Matcher(nlp.vocab, validate=True)
    phrases = PhraseMatcher(nlp.vocab, attr="LOWER")
    wild_first: set[str] = set()
    groups: dict[str, list[P.TokenPattern]] = {
        **P.VERB_PATTERNS,
        **P.STATE_PATTERNS,
        "HOLD": P.HOLD_PATTERNS,
        "CORR": P.CORRECTION_PATTERNS,
        "VERIFY": P.VERIFY_PATTERNS,
        "QNOUN": P.QUESTION_NOUN_PATTERNS,
        "QHOW": P.QUESTION_HOW_PATTERNS,
    }
    for label, patterns in groups.items():
        wild: list[P.TokenPattern] = []
        fixed: set[tuple[str, ...]] = set()
        for pattern in patterns:
            expanded = P.fixed_phrases(pattern)
            if expanded is None:
                wild.append(pattern)
            else:
                fixed.update(expanded)
        if wild:
            cues.add(label, wild)
            wild_first.update(word for pattern in wild for word in pattern[0]["LOWER"]["IN"])
        if fixed:
            phrases.add(label, [Doc(nlp.vocab, words=list(words)) for words in sorted(fixed)])
    kinds = PhraseMatcher(nlp.vocab, attr="LOWER")
    for alias, canonical in P.KIND_ALIASES.items():
        kinds.add(canonical, [nlp.make_doc(alias)])
    return _Pipeline(nlp=nlp, cues=cues, phrases=phrases, kinds=kinds, verb_forms=P.verb_forms(),
                     wild_first=frozenset(wild_first), filter_spans=filter_spans)


# --- pastes: what is not the user's own words ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Prepared:
    masked: str
    """The text with skipped parts blanked out (same length, so offsets stay valid)."""
    compact: str
    """What spaCy reads: each skipped part is one newline (long blank runs make its tokenizer slow)."""
    shifts: tuple[tuple[int, int], ...]
    """(position in ``compact``, offset to add there to get the position in the text), ascending."""
    skipped: tuple[Skipped, ...]
    truncated: bool

    def original(self, pos: int) -> int:
        """A position in ``compact`` as a position in the text."""
        k = bisect_right(self.shifts, (pos, len(self.masked) + 1)) - 1
        return pos + self.shifts[k][1]


_COMPACTION: Final = "This session is being continued"
_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def _prepare(text: str) -> _Prepared:
    regions = _fences(text)
    if "</" in text:
        regions += [(m.start(), m.end(), "harness") for m in P.HARNESS_BLOCK.finditer(text)]
    if "[Request interrupted" in text or "Caveat:" in text or text.startswith(_COMPACTION):
        regions += [(m.start(), m.end(), "harness") for m in P.HARNESS_LINE.finditer(text)]
    regions += _pasted_lines(text)
    if '"' in text or "\u201c" in text:
        regions += [(m.start(), m.end(), "quote") for m in P.QUOTED.finditer(text)]
    truncated = len(text) > MAX_ANALYSED_CHARS
    if truncated:
        head = _word_boundary(text, HEAD_CHARS)
        tail = _word_boundary(text, len(text) - TAIL_CHARS)
        if tail > head:
            regions.append((head, tail, "length-cap"))
    merged = _merge(regions, text)
    normalised = text.translate(_APOSTROPHES)
    masked, compact, shifts = _blank(normalised, merged)
    return _Prepared(masked, compact, shifts, tuple(Skipped(s, e, r) for s, e, r in merged), truncated)


def _fences(text: str) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        end = text.find("```", start + 3)
        if end < 0:
            out.append((start, len(text), "code-fence"))
            break
        out.append((start, end + 3, "code-fence"))
        pos = end + 3
    return out


def _pasted_lines(text: str) -> list[tuple[int, int, str]]:
    """Machine output and code pasted without a fence, line by line."""
    out: list[tuple[int, int, str]] = []
    run: list[tuple[int, int, bool]] = []  # (start, end, is_log) of paste-like lines

    def flush() -> None:
        if run and (len(run) > 1 or run[0][2]):
            out.append((run[0][0], run[-1][1], "paste" if len(run) > 1 else "log"))
        run.clear()

    pos = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        body = line.rstrip("\r\n")
        if not body.strip():
            continue
        is_log = P.LOG_LINE.match(body) is not None
        signature = None if is_log else P.SERVER_LOG_SIGNATURE.search(body)
        if signature is not None and signature.start() - (len(body) - len(body.lstrip())) <= 12:
            is_log = True
        if is_log or P.CODE_LINE.match(body):
            run.append((start, start + len(body), is_log))
            continue
        flush()
        tail = P.INLINE_LOG_TAIL.search(body)
        if tail is not None:
            out.append((start + tail.start(), start + len(body), "log"))
        elif signature is not None:
            end = body.find(" ", signature.end() + 1)
            out.append((start + signature.start(), start + (len(body) if end < 0 else end), "log"))
    flush()
    return out


def _word_boundary(text: str, pos: int) -> int:
    space = text.rfind(" ", 0, pos)
    return pos if space < pos - 40 else space


def _merge(regions: list[tuple[int, int, str]], text: str) -> list[tuple[int, int, str]]:
    merged: list[tuple[int, int, str]] = []
    for start, end, reason in sorted(regions):
        if merged and start <= merged[-1][1] + 1 and not text[merged[-1][1] : start].strip():
            prev = merged[-1]
            merged[-1] = (prev[0], max(prev[1], end), prev[2])
        else:
            merged.append((start, end, reason))
    return merged


def _blank(text: str, regions: list[tuple[int, int, str]]) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """The text with each skipped part blanked (same length) and compacted to one newline (a sentence
    break), plus the offset table from compact positions back to text positions."""
    blanked: list[str] = []
    compact: list[str] = []
    shifts: list[tuple[int, int]] = [(0, 0)]
    pos = 0
    size = 0
    for start, end, _ in regions:
        blanked += [text[pos:start], "\n" + " " * (end - start - 1)]
        compact += [text[pos:start], "\n"]
        size += start - pos + 1
        shifts.append((size, end - size))
        pos = end
    blanked.append(text[pos:])
    compact.append(text[pos:])
    return "".join(blanked), "".join(compact), tuple(shifts)


# --- entities --------------------------------------------------------------------------------------------

_BIND_ALL: Final = frozenset({"*", "\\*", "[::]", "0.0.0.0"})
_NOT_HOSTS: Final = frozenset({"http", "https", "tcp", "udp", "ws", "wss", "grpc", "redis", "postgres"})


def _valid_port(raw: str) -> bool:
    value = int(raw)
    return 0 < value < 65536


def _year_like(raw: str) -> bool:
    return len(raw) == 4 and raw[:2] in ("19", "20")


_GATE_WORDS: Final = sorted({g for gates in P.ENTITY_GATES.values() for g in gates}, key=len, reverse=True)
_GATES: Final = re.compile("(?=(" + "|".join(re.escape(g) for g in _GATE_WORDS) + "))")
"""One pass over the message finds which entity regexes are worth running."""


def _segments(prep: _Prepared) -> list[tuple[int, int]]:
    """The parts of the text that are read (the complement of the skipped parts)."""
    out: list[tuple[int, int]] = []
    pos = 0
    for part in prep.skipped:
        if part.start > pos:
            out.append((pos, part.start))
        pos = max(pos, part.end)
    if pos < len(prep.masked):
        out.append((pos, len(prep.masked)))
    return out


def _find_entities(prep: _Prepared, doc: Doc, pipe: _Pipeline, tokens: list[Token]) -> list[Entity]:
    masked = prep.masked
    segments = _segments(prep)
    present = {m.group(1) for m in _GATES.finditer(prep.compact.lower())}  # overlapping: "-p" in "--port"

    def scan(rx: re.Pattern[str]) -> Iterator[re.Match[str]]:
        if present.isdisjoint(P.ENTITY_GATES[rx]):
            return
        # only the read parts: regexes over long blanked pastes would cost as much as the pastes
        for start, end in segments:
            yield from rx.finditer(masked, start, end)

    units: list[Entity] = []
    for rx in (P.UNIT_SUFFIX, P.SYSTEMCTL_UNIT, P.DOCKER_CONTAINER, P.KIND_PREFIXED_UNIT):
        for m in scan(rx):
            value = m.group("unit")
            start, end = m.span("unit")
            low = value.lower()
            hint = P.KIND_ALIASES.get(low)
            if hint is None:
                prefix = low.replace("_", "-").split("-")[0].split(".")[0]
                hint = P.KIND_ALIASES.get(prefix)
            units.append(Entity(EntityLabel.unit, value, start, end, value, kind=hint))

    ports: list[Entity] = []
    hosts: list[Entity] = []

    def add_port(start: int, end: int, raw: str) -> None:
        if _valid_port(raw):
            ports.append(Entity(EntityLabel.port, str(int(raw)), start, end, masked[start:end]))
        follow = P.PORT_LIST_NEXT.match(masked, end)
        while follow is not None:
            if _valid_port(follow.group("port")) and not _year_like(follow.group("port")):
                s, e = follow.span("port")
                ports.append(Entity(EntityLabel.port, str(int(follow.group("port"))), s, e, masked[s:e]))
            follow = P.PORT_LIST_NEXT.match(masked, follow.end())

    for m in scan(P.HOSTPORT):
        host = m.group("host")
        add_port(m.start(), m.end(), m.group("port"))
        if host and host not in _BIND_ALL and host.lower() not in _NOT_HOSTS and not _is_kind(host):
            hosts.append(Entity(EntityLabel.host, host.lower(), m.start("host"), m.end("host"), host))
    for m in scan(P.PORTWORD):
        add_port(m.start(), m.end(), m.group("port"))
    for rx in (P.DOCKER_PUBLISH, P.POSITIONAL_PORT):
        for m in scan(rx):
            add_port(m.start("port"), m.end("port"), m.group("port"))
    for m in scan(P.BARE_PORT):
        if not _year_like(m.group("port")):
            add_port(m.start("port"), m.end("port"), m.group("port"))

    for m in scan(P.USER_AT_HOST):
        hosts.append(Entity(EntityLabel.host, m.group("host").lower(), m.start(), m.end(), m.group(0)))
    for m in scan(P.IPV4):
        ip = m.group(0)
        if ip != "0.0.0.0" and all(int(octet) < 256 for octet in ip.split(".")):
            hosts.append(Entity(EntityLabel.host, ip, m.start(), m.end(), ip))
    for m in scan(P.LOCALHOST):
        hosts.append(Entity(EntityLabel.host, "localhost", m.start(), m.end(), m.group(0)))
    for rx in (P.MARKED_HOST, P.SUFFIXED_HOST):
        for m in scan(rx):
            name = m.group("host")
            if _hostname_like(name):
                hosts.append(Entity(EntityLabel.host, name.lower(), m.start("host"), m.end("host"), name))

    kinds: list[Entity] = []
    spans = pipe.filter_spans(pipe.kinds(doc, as_spans=True))
    for span in spans:
        start, end = prep.original(span.start_char), prep.original(span.end_char - 1) + 1
        kinds.append(Entity(EntityLabel.kind, span.label_, start, end, masked[start:end]))
    for token in tokens:
        low = token.lower_
        if ("-" in low or "." in low) and low not in P.KIND_ALIASES:
            prefix = low.replace("_", "-").split("-")[0].split(".")[0]
            if prefix in P.KIND_PREFIXES and prefix in P.KIND_ALIASES:
                start = prep.original(token.idx)
                kinds.append(Entity(EntityLabel.kind, P.KIND_ALIASES[prefix], start, start + len(token),
                                    token.text))

    # first come, first kept: units, then ports, kinds, hosts; a host may sit inside a port ("localhost:8080")
    chosen: list[Entity] = []
    taken = bytearray(len(masked))
    taken_not_port = bytearray(len(masked))
    for group in (units, ports, kinds, hosts):
        for ent in sorted(group, key=lambda e: (e.start, -(e.end - e.start))):
            mask = taken_not_port if ent.label == EntityLabel.host else taken
            if any(mask[ent.start : ent.end]):
                continue
            chosen.append(ent)
            taken[ent.start : ent.end] = b"\x01" * (ent.end - ent.start)
            if ent.label != EntityLabel.port:
                taken_not_port[ent.start : ent.end] = b"\x01" * (ent.end - ent.start)
    return sorted(chosen, key=lambda e: (e.start, e.label))


def _is_kind(name: str) -> bool:
    return name.lower() in P.KIND_ALIASES


def _hostname_like(name: str) -> bool:
    # a digit (gpu2, ct200, gpu-node-3) or a dotted name (db.internal.example): hyphenated English words
    # ("to re-import", "on follow-up") are not hosts
    if not (any(ch.isdigit() for ch in name) or name.count(".") >= 2):
        return False
    if P.NOT_A_HOST.match(name) or _is_kind(name):
        return False
    low = name.lower()
    prefix = low.replace("_", "-").split("-")[0]
    return prefix not in P.KIND_PREFIXES


# --- reading the tokens ----------------------------------------------------------------------------------

_VERB_LABELS: Final[dict[str, Intent]] = {"V_RESTART": Intent.restart, "V_LAUNCH": Intent.launch,
                                          "V_STOP": Intent.stop}
_STATE_LABELS: Final = frozenset(P.STATE_TIER)
_SIDE_LABELS: Final = frozenset({"VERIFY", "QNOUN", "QHOW"})
"""Cues that never hide other cues under them."""
_CANNOT_REACH: Final = ("connect", "refused", "reach", "unreachable", "timeout", "timed", "502", "503", "504")
"""Words of a failure to reach something: "it" after them means the server that did not answer."""
_DETERMINERS: Final = frozenset({"the", "a", "an", "my", "this", "that", "these", "those", "your", "our"})
_READY_FOR_OK: Final = frozenset({
    "use", "requests", "traffic", "inference", "serving", "go", "roll", "accept", "serve", "connections",
    "benchmarking", "benchmark", "testing", "queries",
})
"""``it's ready for traffic``: what a server can be ready for (not "ready for review")."""
_QUESTION_SUBJECTS: Final = frozenset({"you", "u", "we", "they", "i", "it", "the", "this", "that", "these",
                                       "those", "anything", "everything", "sglang", "vllm", "ollama", "tgi"})
_BEFORE_IMPERATIVE: Final = P.IMPERATIVE_SKIP | P.AUXILIARIES | P.REQUEST_MODALS | {"do", "does"}
_KILLED_LEMMAS: Final = frozenset({"kill", "stop", "terminate", "shut", "take", "halt", "pkill"})
"""``it got killed``, ``the server stopped``: said of a server, these mean it is down."""
_NEW_SUBJECTS: Final = frozenset({"it", "its", "i", "we", "you", "they", "the"})
"""After "and", these start a new clause ("… and it responds fine")."""
_BARE_FOLLOWERS: Final = frozenset({
    "and", "now", "yet", "again", "on", "at", "with", "fine", "already", "too", "finally", "though", "there",
    "here", "ok", "okay", "thanks", "btw", "but", "so", "as", "after", "since", "for", "lol", "to", "from",
    "in", "of", "when", "while", "because", "anymore", "either",
})
"""Words that may follow a subject-less state word ("up now", "down again", "refused from the api")."""


@dataclass(slots=True)
class _Cue:
    label: str
    start: int
    end: int
    """Token indices into the content tokens, end exclusive."""


@dataclass(slots=True)
class _Clause:
    start: int
    end: int
    sentence: int
    condition: str | None = None
    """The conditional word that opens it ("if", "when", …), or None."""
    qkind: str | None = None
    """plain, request, suggest, opinion, why, why_you, or None for a statement."""
    verify: int | None = None
    """Token index of a "check"/"make sure" whose state words this clause asks about."""
    group: int = 0
    index: int = 0
    """Position in the message's clause list."""


@dataclass(slots=True)
class _Hit:
    intent: Intent
    strength: float
    spans: list[tuple[int, int]]
    """Token spans of the words it rests on."""
    anchor: int
    clause: int
    mention: str | None = None
    own: tuple[int, int] | None = None
    """Token span whose entities belong to this hit first (a hold phrase's inner words)."""
    past: bool = False


@dataclass(slots=True)
class _Context:
    """What stands before a verb in its clause."""

    subject: int | None
    negated: bool
    you: bool
    already: bool


@dataclass(slots=True)
class _Object:
    cls: str
    """server, pronoun, nonserver, none or unknown."""
    mention: str | None = None


class _Reader:
    def __init__(self, pipe: _Pipeline, text: str, prep: _Prepared, doc: Doc) -> None:
        self.pipe = pipe
        self.text = text
        self.prep = prep
        self.doc = doc
        content = [t for t in doc if not t.is_space]
        self.low = [t.lower_ for t in content]
        self.n = len(content)
        self.doc_to_content = {t.i: k for k, t in enumerate(content)}
        self.starts = [prep.original(t.idx) for t in content]
        self.ends = [start + len(t) for start, t in zip(self.starts, content, strict=True)]
        self.entities = _find_entities(prep, doc, pipe, content)
        self.entity_at: list[int | None] = [None] * self.n
        self._index_entities()
        self.hits: list[_Hit] = []
        self.used: set[int] = set()
        """Tokens a hold or correction phrase took, so they are not read again as verbs."""
        self.cues: list[_Cue] = []
        self.cue_starts: set[int] = set()
        self.clauses: list[_Clause] = []
        self.clause_of: list[int] = []

    # -- setup ------------------------------------------------------------------------------------------

    def _index_entities(self) -> None:
        self.entity_tokens: list[list[int]] = []
        for k, ent in enumerate(self.entities):
            tokens: list[int] = []
            i = max(bisect_right(self.starts, ent.start) - 1, 0)
            while i < self.n and self.starts[i] < ent.end:
                if ent.start < self.ends[i]:
                    tokens.append(i)
                    if self.entity_at[i] is None:
                        self.entity_at[i] = k
                i += 1
            self.entity_tokens.append(tokens)

    def _cues(self) -> list[_Cue]:
        found: list[_Cue] = []
        strings = self.pipe.nlp.vocab.strings
        matches = list(self.pipe.phrases(self.doc))
        if not self.pipe.wild_first.isdisjoint(self.low):
            matches += self.pipe.cues(self.doc)
        for match_id, start, end in matches:
            first = self.doc_to_content.get(start)
            last = self.doc_to_content.get(end - 1)
            if first is None or last is None:
                continue
            found.append(_Cue(strings[match_id], first, last + 1))
        side = [c for c in found if c.label in _SIDE_LABELS]
        main = [c for c in found if c.label not in _SIDE_LABELS]
        main.sort(key=lambda c: (0 if c.label in ("HOLD", "CORR") else 1, -(c.end - c.start), c.start))
        taken = bytearray(self.n)
        kept: list[_Cue] = []
        for cue in main:
            if any(taken[cue.start : cue.end]):
                continue
            taken[cue.start : cue.end] = b"\x01" * (cue.end - cue.start)
            kept.append(cue)
        return sorted(kept + side, key=lambda c: (c.start, c.end))

    def _sentences(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        start = 0
        masked = self.prep.masked
        for i in range(self.n):
            if i > start and "\n" in masked[self.ends[i - 1] : self.starts[i]]:
                out.append((start, i))
                start = i
            word = self.low[i]
            if word and all(ch in ".!?;…" for ch in word) and not (word == "." and self._glued(i)):
                out.append((start, i + 1))
                start = i + 1
        if start < self.n:
            out.append((start, self.n))
        return [s for s in out if s[1] > s[0]]

    def _glued(self, i: int) -> bool:
        """A "." with no space on either side ("v0.6.2" split oddly) ends no sentence."""
        inner = 0 < i < self.n - 1
        return inner and self.ends[i - 1] == self.starts[i] and self.ends[i] == self.starts[i + 1]

    def _clauses(self, sentences: list[tuple[int, int]], cues: list[_Cue]) -> list[_Clause]:
        cue_starts = {c.start: c for c in cues if c.label in _VERB_LABELS or c.label in ("HOLD", "VERIFY")}
        clauses: list[_Clause] = []
        for s_index, (s_start, s_end) in enumerate(sentences):
            start = s_start
            condition: str | None = None
            for i in range(s_start, s_end):
                word = self.low[i]
                brk = False
                skip_token = False
                if i == s_start:
                    if word in P.CONDITIONALS:
                        condition = word
                    continue
                if word in P.CLAUSE_BREAKS or (word in ("-", "--") and self._spaced(i)):
                    brk = True
                    skip_token = not word.isalpha()
                elif word in P.CONDITIONALS:
                    brk = True
                elif word in ("and", "or", "&", "plus"):
                    nxt = i + 1
                    brk = nxt < s_end and (nxt in cue_starts or self.low[nxt] in _NEW_SUBJECTS)
                if brk:
                    if i > start:
                        clauses.append(_Clause(start, i, s_index, condition))
                    start = i + 1 if skip_token else i
                    condition = word if word in P.CONDITIONALS else None
            if s_end > start:
                clauses.append(_Clause(start, s_end, s_index, condition))
        clauses = [c for c in clauses if c.end > c.start and not self._only_punct(c)]
        for index, clause in enumerate(clauses):
            clause.index = index
        return clauses

    def _spaced(self, i: int) -> bool:
        return self.starts[i] > self.ends[i - 1] if i > 0 else True

    def _only_punct(self, clause: _Clause) -> bool:
        return all(not any(ch.isalnum() for ch in self.low[i]) for i in range(clause.start, clause.end))

    def _question_kinds(self, clauses: list[_Clause]) -> None:
        by_sentence: dict[int, list[_Clause]] = {}
        for clause in clauses:
            by_sentence.setdefault(clause.sentence, []).append(clause)
        for group in by_sentence.values():
            last = group[-1]
            ends_q = any("?" in self.low[i] for i in range(last.start, min(last.end + 1, self.n)))
            current: str | None = None
            for k, clause in enumerate(group):
                opener = self._opener(clause, ends_q, k == 0)
                if opener is not None:
                    current = opener
                clause.qkind = current
            if ends_q and all(c.qkind is None for c in group):
                last.qkind = "suggest"

    def _opener(self, clause: _Clause, ends_q: bool, first: bool) -> str | None:
        i = clause.start
        while i < clause.end - 1 and self.low[i] in P.DISCOURSE:
            i += 1
        w = self.low[i]
        w2 = self.low[i + 1] if i + 1 < clause.end else ""
        w3 = self.low[i + 2] if i + 2 < clause.end else ""
        ahead = self.low[i + 1 : min(clause.end, i + 5)]
        if w == "why":
            if w2 == "not" or (w2 in ("do", "dont") and (w3 in P.NEGATORS or w3 in ("you", "we"))):
                return "request"
            if w2 in ("did", "would", "'d", "do", "are", "were", "have", "does", "'re") and (
                    "you" in ahead or "u" in ahead):
                return "why_you"
            return "why"
        if w == "how" and w2 == "come":
            return "why"
        if w in ("how", "what") and w2 == "about":
            return "request"
        if w == "any" and w2 in ("idea", "ideas", "reason", "clue", "clues"):
            return "why" if "why" in ahead else "plain"
        if w in ("can", "could", "would", "will") and w2 in ("you", "u", "ya", "we", "someone"):
            return "request"
        if w in ("should", "shall") and w2 in ("i", "we"):
            return "opinion"
        if w in ("do", "does", "did") and w2 in P.NEGATORS:
            return "plain" if ends_q else None
        if w in ("do", "does", "did") and not (w2 in _QUESTION_SUBJECTS or self._is_entity(i + 1)):
            return None  # "do a quick restart": an imperative
        if w in P.QUESTION_AUX:
            if w in ("will", "would", "can", "could") and not ends_q:
                return None
            return "plain"
        if w in P.WH_WORDS:
            if w == "when" and not (ends_q and first):
                return None
            return "plain"
        return None

    # -- main ---------------------------------------------------------------------------------------------

    def read(self) -> MessageReading:
        if self.n == 0:
            return self._result([])
        cues = self._cues()
        self.cues = cues
        self.cue_starts = {c.start for c in cues}
        sentences = self._sentences()
        clauses = self._clauses(sentences, cues)
        self._question_kinds(clauses)
        self._groups(clauses, cues)
        self.clauses = clauses
        # every token belongs to the last clause that starts at or before it (lone punctuation included)
        self.clause_of = [0] * self.n
        for k, clause in enumerate(clauses):
            end = clauses[k + 1].start if k + 1 < len(clauses) else self.n
            for i in range(clause.start, end):
                self.clause_of[i] = k
        for cue in cues:
            if cue.label == "VERIFY":
                self._verify(cue)
        # hold and correction phrases first: they absorb the verb that follows them
        for cue in cues:
            if cue.label == "HOLD":
                self._hold(cue)
            elif cue.label == "CORR":
                self._correction_phrase(cue)
        for cue in cues:
            if cue.start in self.used:
                continue
            if cue.label in _VERB_LABELS:
                self._verb(cue)
            elif cue.label in _STATE_LABELS:
                self._state(cue)
            elif cue.label in ("QNOUN", "QHOW"):
                self._question_noun(cue)
        self._bare_wait(sentences)
        self._correction_openers(sentences)
        return self._result(sentences)

    # -- helpers over words -------------------------------------------------------------------------------

    def _clause(self, i: int) -> _Clause:
        return self.clauses[self.clause_of[i]]

    def _span_text(self, start: int, end: int) -> str:
        return self.text[self.starts[start] : self.ends[end - 1]]

    def _is_entity(self, i: int, *labels: EntityLabel) -> bool:
        k = self.entity_at[i]
        return k is not None and (not labels or self.entities[k].label in labels)

    def _server_word(self, i: int) -> bool:
        return self._is_entity(i) or self.low[i] in P.SERVER_NOUNS

    def _subject_head(self, i: int) -> bool:
        word = self.low[i]
        return self._server_word(i) or word in P.SUBJECT_PRONOUNS

    def _subject_class(self, head: int, clause: _Clause) -> tuple[str, str | None]:
        """Classify the noun phrase ending at ``head``: server, pronoun, blocked, nonserver, unknown."""
        start = head
        while start > clause.start and self.low[start - 1] not in ("and", "or", ",", "but", "so", "then"):
            if head - start >= 6:
                break
            start -= 1
        while start < head and (self.low[start] in P.DISCOURSE or self.low[start] in P.CORRECTION_OPENERS):
            start += 1
        words = range(start, head + 1)
        mention = self._span_text(start, head + 1)
        if self.low[head] in P.BLOCKED_SUBJECTS:
            return "blocked", None
        if any(self._server_word(i) for i in words):
            return "server", mention
        if any(self.low[i] in P.NONSERVER_NOUNS for i in words):
            return "nonserver", None
        if any(self.low[i] in P.BLOCKED_SUBJECTS for i in words):
            return "blocked", None
        if any(self.low[i] in P.SUBJECT_PRONOUNS for i in words):
            return "pronoun", mention
        return "unknown", None

    def _sentence_has_server(self, i: int, ports: bool = True) -> bool:
        sentence = self._clause(i).sentence
        for clause in self.clauses:
            if clause.sentence != sentence:
                continue
            for j in range(clause.start, clause.end):
                if self._is_entity(j) and (ports or not self._is_entity(j, EntityLabel.port)):
                    return True
                if self.low[j] in P.OBJECT_SERVER_NOUNS or self.low[j] in ("it", "its"):
                    return True
        return False

    def _add(self, intent: Intent, strength: float, spans: list[tuple[int, int]], anchor: int,
             mention: str | None = None, own: tuple[int, int] | None = None, past: bool = False) -> None:
        self.hits.append(_Hit(intent, strength, spans, anchor, self.clause_of[anchor], mention, own, past))

    def _question(self, spans: list[tuple[int, int]], anchor: int, mention: str | None = None) -> None:
        self._add(Intent.question, 0.9, spans, anchor, mention)

    # -- verbs --------------------------------------------------------------------------------------------

    def _context(self, i: int, clause: _Clause, command: bool = True) -> _Context:
        """Scan back from a verb over words that may stand before an imperative. With ``command``, a
        server kind right before the verb at the clause start is a command line ("vllm serve …")."""
        negated = you = already = wants = False
        j = i - 1
        while j >= clause.start:
            w = self.low[j]
            if w in P.NEGATORS:
                negated = True
            elif w == "already":
                already = True
            elif w == "to":
                governor = self.low[j - 1] if j - 1 >= clause.start else ""
                if governor in ("forget", "remember"):
                    return _Context(None, False, you, already)
                if governor in ("you", "u") and j - 2 >= clause.start and self.low[j - 2] in (
                        "want", "need", "like", "asked", "ask", "told", "tell"):
                    wants = True
                    j -= 2
                    continue
                if governor in P.PLAN_GOVERNORS:
                    return _Context(j - 1, negated, you, already)
                if governor not in P.TO_GOVERNORS:
                    return _Context(j - 1, negated, you, already)
                j -= 2  # "proceed to", "need to": the governor is part of the request
                continue
            elif w in ("you", "u", "ya", "we"):
                you = True
            elif (w == "i" and wants) or w in _BEFORE_IMPERATIVE:
                pass
            elif command and j == clause.start and self._is_entity(j, EntityLabel.kind) and j == i - 1:
                pass  # "vllm serve …", "ollama serve": a command line
            elif w == "why" and clause.qkind == "request":
                return _Context(None, False, you, already)  # "why don't you restart it": a suggestion
            else:
                return _Context(j, negated, you, already)
            j -= 1
        return _Context(None, negated, you, already)

    def _object(self, cue: _Cue, clause: _Clause, phrasal: bool) -> _Object:
        if phrasal:
            inner = [i for i in range(cue.start + 1, cue.end)
                     if self.low[i] not in ("up", "down", "off", "on", "back", "online", "running", "going",
                                            "serving")]
            for i in inner:
                if self._is_entity(i) or self.low[i] in P.OBJECT_SERVER_NOUNS:
                    return _Object("server", self._span_text(inner[0], i + 1))
                if self.low[i] in P.OBJECT_PRONOUNS:
                    return _Object("pronoun", self.low[i])
                if self.low[i] in P.NONSERVER_NOUNS:
                    return _Object("nonserver")
            if inner:
                return _Object("unknown", self._span_text(inner[0], inner[-1] + 1))
        return self._scan_object(cue.end, clause, first_word=not phrasal)

    def _scan_object(self, start: int, clause: _Clause, first_word: bool) -> _Object:
        seen_unknown: int | None = None
        i = start
        limit = min(clause.end, start + 7)
        while i < limit:
            w = self.low[i]
            # "the server tests" is about tests; "the docs server" is not made "the docs" by its "the"
            compound = (i + 1 < limit and self.low[i + 1] in P.COMPOUND_HEADS
                        and w not in _DETERMINERS and w not in P.OBJECT_SKIP)
            if self._is_entity(i) and not compound:
                ent = self.entities[self.entity_at[i] or 0]
                return _Object("server", ent.text)
            if w in P.OBJECT_SERVER_NOUNS and not compound:
                # "the api container", "the vllm server": the head noun belongs to the mention
                end = i + 2 if i + 1 < limit and self.low[i + 1] in P.STRONG_SERVER_NOUNS else i + 1
                return _Object("server", self._span_text(start, end))
            if w in P.OBJECT_PRONOUNS and (w not in ("that", "this", "all", "both") or self._ends_here(i)):
                return _Object("pronoun", self._span_text(start, i + 1))
            if w in P.NONSERVER_NOUNS or compound:
                if i + 1 < limit and self.low[i + 1] in P.STRONG_SERVER_NOUNS:
                    i += 1
                    continue
                return _Object("nonserver")
            if w in P.PREPOSITIONS:
                return self._after_preposition(i + 1, limit) if seen_unknown is None else _Object(
                    "unknown", self._span_text(start, seen_unknown + 1))
            if w in P.OBJECT_END or not any(ch.isalnum() for ch in w):
                break
            if w.startswith("-") or w in P.OBJECT_SKIP:
                i += 1
                continue
            if w.isdigit():
                return _Object("server", w)
            if first_word and i == start and w.endswith("ing"):
                return _Object("nonserver")
            if seen_unknown is None:
                seen_unknown = i
            i += 1
        if seen_unknown is not None:
            return _Object("unknown", self._span_text(start, seen_unknown + 1))
        return _Object("none")

    def _after_preposition(self, i: int, limit: int) -> _Object:
        while i < limit:
            w = self.low[i]
            if self._is_entity(i):
                return _Object("server", self.entities[self.entity_at[i] or 0].text)
            if w.startswith("-") or w in P.CONFIG_NOUNS:
                return _Object("none")
            if w in P.OBJECT_SKIP or w in _DETERMINERS:
                i += 1
                continue
            if w in P.OBJECT_SERVER_NOUNS:
                return _Object("server", w)
            return _Object("nonserver")
        return _Object("none")

    def _ends_here(self, i: int) -> bool:
        return i + 1 >= self.n or not any(ch.isalnum() for ch in self.low[i + 1]) or self.low[i + 1] in (
            "and", "now", "please", "again", "too", "on", "for")

    def _object_ok(self, lemma: str, obj: _Object) -> bool:
        if obj.cls == "nonserver":
            return False
        if lemma in P.GENERIC_LEMMAS:
            return obj.cls == "server" and (obj.mention or "").lower() not in ("model", "the model")
        if lemma in P.NEEDS_OBJECT_LEMMAS:
            return obj.cls != "none"
        return True

    def _verb(self, cue: _Cue) -> None:
        clause = self._clause(cue.start)
        intent = _VERB_LABELS[cue.label]
        first = self.low[cue.start]
        lemma, form = self.pipe.verb_forms.get(first, (first, "base"))
        phrasal = cue.end - cue.start > 1
        ctx = self._context(cue.start, clause, command=form == "base")
        if (form == "base" and ctx.subject is not None and self.low[ctx.subject] in ("a", "another", "quick")
                and intent == Intent.restart):
            self._noun_restart(cue, clause, ctx.subject)
            return
        if form == "ger":
            before = self.low[cue.start - 1] if cue.start > 0 else ""
            if cue.start > clause.start and before in ("try", "trying"):
                form, ctx = "base", _Context(None, ctx.negated, ctx.you, ctx.already)
            elif before in ("before", "then") and clause.qkind is None and not ctx.negated:
                # "shut down the old one before launching the new one": the next step of an instruction
                obj = self._object(cue, clause, phrasal)
                if self._object_ok(lemma, obj):
                    self._add(intent, 0.7, [(cue.start, cue.end)], cue.start, obj.mention)
                return
            elif clause.qkind in ("plain", "suggest") and self._verb_relevant(cue, clause, ctx):
                self._question([(cue.start, cue.end)], cue.start)
                return
            else:
                return
        if form in ("past", "3sg"):
            self._descriptive_past(cue, clause, ctx, intent, lemma, form)
            return
        if ctx.subject is None:
            self._imperative(cue, clause, ctx, intent, lemma, phrasal)
        else:
            self._descriptive_base(cue, clause, ctx, intent, lemma)

    def _imperative(self, cue: _Cue, clause: _Clause, ctx: _Context, intent: Intent, lemma: str,
                    phrasal: bool) -> None:
        obj = self._object(cue, clause, phrasal)
        if obj.cls == "none":
            obj = self._shared_object(clause) or obj
        if not self._object_ok(lemma, obj) or self._refers_to_nonserver(obj, clause):
            return
        span = [(cue.start, cue.end)]
        if clause.qkind in ("plain", "opinion", "why"):
            self._question(span, cue.start, obj.mention)
            return
        if clause.qkind == "why_you":
            return
        if clause.condition is not None and clause.condition not in ("whether",):
            return
        negated = ctx.negated or self._inherits_negation(clause)
        if negated:
            self._add(Intent.hold, 0.9, span, cue.start, obj.mention)
            return
        if intent == Intent.launch and "again" in self.low[cue.end : clause.end]:
            intent = Intent.restart
        strength = 0.9 if obj.cls in ("server", "pronoun") or lemma in P.RESTART_LEMMAS else 0.8
        if clause.qkind == "suggest" or "maybe" in self.low[clause.start : cue.start]:
            strength = 0.7
        self._add(intent, strength, span, cue.start, obj.mention)

    def _refers_to_nonserver(self, obj: _Object, clause: _Clause) -> bool:
        """``it``/``them`` whose only candidate is the clause just before, in the same sentence,
        which names something that is not a server and no server: "the notebook kernel died, can you
        restart it?" is not about a server."""
        if obj.cls != "pronoun" or (obj.mention or "").lower() not in ("it", "them") or clause.index == 0:
            return False
        before = self.clauses[clause.index - 1]
        if before.sentence != clause.sentence:
            return False
        words = range(before.start, before.end)
        if any(self.low[i].startswith(_CANNOT_REACH) for i in words):
            return False  # "the client cannot connect, restart it": the server it cannot reach
        return any(self.low[i] in P.NONSERVER_NOUNS for i in words) and not any(
            self._server_word(i) for i in words)

    def _shared_object(self, clause: _Clause) -> _Object | None:
        """``kill and restart sglang``: a verb without object shares the next verb's."""
        index = clause.index
        if index + 1 >= len(self.clauses):
            return None
        nxt = self.clauses[index + 1]
        if nxt.sentence != clause.sentence or nxt.start + 1 >= nxt.end:
            return None
        if self.low[nxt.start] not in ("and", "or", "&"):
            return None
        verb = self._next_verb(nxt.start + 1, nxt)
        if verb is None or verb.start != nxt.start + 1:
            return None
        return self._scan_object(verb.end, nxt, first_word=True)

    def _inherits_negation(self, clause: _Clause) -> bool:
        """``don't kill or restart it``: the second verb shares the first one's "don't"."""
        if self.low[clause.start] not in ("or", "and", "nor") or clause.start < 1:
            return False
        previous = [h for h in self.hits if h.intent == Intent.hold and h.spans[-1][1] == clause.start]
        return bool(previous)

    def _descriptive_base(self, cue: _Cue, clause: _Clause, ctx: _Context, intent: Intent,
                          lemma: str) -> None:
        assert ctx.subject is not None
        subject, mention = self._subject_class(ctx.subject, clause)
        if self.low[ctx.subject] in ("i", "we"):
            subject = "self"
        span = [(cue.start, cue.end)]
        if not ctx.negated:
            # "doesn't this start?", "didn't it start": the negation stands before the subject
            j = ctx.subject - 1
            while j >= clause.start and (self.low[j] in P.AUXILIARIES or self.low[j] in P.NEGATORS):
                ctx.negated = ctx.negated or self.low[j] in P.NEGATORS
                j -= 1
        if ctx.negated and intent == Intent.launch and subject in ("server", "pronoun", "self", "unknown"):
            if clause.condition is None or clause.qkind:
                self._add(Intent.not_ready, 0.8, [(ctx.subject, ctx.subject + 1), *span], cue.start, mention)
                if clause.qkind in ("why", "plain", "suggest"):
                    self._question(span, cue.start, mention)
            return
        if clause.qkind in ("plain", "suggest", "opinion", "why") and self._verb_relevant(cue, clause, ctx):
            self._question(span, cue.start, mention)

    def _verb_relevant(self, cue: _Cue, clause: _Clause, ctx: _Context) -> bool:
        if ctx.subject is not None:
            subject, _ = self._subject_class(ctx.subject, clause)
            if subject in ("server", "pronoun"):
                return True
        obj = self._scan_object(cue.end, clause, first_word=True)
        return obj.cls in ("server", "pronoun", "none")

    def _descriptive_past(self, cue: _Cue, clause: _Clause, ctx: _Context, intent: Intent, lemma: str,
                          form: str) -> None:
        span = [(cue.start, cue.end)]
        if clause.qkind in ("plain", "suggest", "opinion"):
            if self._verb_relevant(cue, clause, ctx):
                self._question(span, cue.start)
            return
        if form != "past" or clause.condition is not None:
            return
        if ctx.subject is None and not ctx.you:
            if ctx.already and intent in (Intent.launch, Intent.restart):
                self._add(Intent.correction, 0.75, span, cue.start)
                self._add(Intent.ready, 0.6, span, cue.start)
            return
        word = "you" if ctx.subject is None else self.low[ctx.subject]
        if word in ("you", "u"):
            sentence = clause.sentence
            words = {self.low[i] for c in self.clauses if c.sentence == sentence
                     for i in range(c.start, c.end)}
            if words & P.CORRECTION_MARKERS and intent in (Intent.stop, Intent.restart, Intent.launch):
                self._add(Intent.correction, 0.75, span, cue.start)
            return
        assert ctx.subject is not None
        subject, mention = self._subject_class(ctx.subject, clause)
        if word in ("i", "we"):
            if ctx.already and intent in (Intent.launch, Intent.restart):
                self._add(Intent.correction, 0.75, span, cue.start)
                self._add(Intent.ready, 0.6, span, cue.start)
            return
        if subject not in ("server", "pronoun"):
            return
        if intent == Intent.launch and lemma in ("start", "launch", "boot", "spin", "bring", "fire"):
            obj = self._scan_object(cue.end, clause, first_word=True)
            object_follows = obj.cls == "server" and not self._is_entity(cue.end, EntityLabel.port) and (
                self.low[cue.end] not in P.PREPOSITIONS)
            if obj.cls == "pronoun" or object_follows:
                return  # "it started the server": transitive, not a state
            self._add(Intent.not_ready if ctx.negated else Intent.ready, 0.6, span, cue.start, mention)
            if ctx.already and not ctx.negated:
                self._add(Intent.correction, 0.75, span, cue.start)
        elif intent == Intent.stop and lemma in _KILLED_LEMMAS:
            self._add(Intent.not_ready, 0.6, span, cue.start, mention)

    def _noun_restart(self, cue: _Cue, clause: _Clause, article: int) -> None:
        """``it needs a restart``, ``give it a quick restart``: a suggestion to restart."""
        before = self.low[clause.start : article]
        if any(w in ("need", "needs", "requires", "require", "do", "try", "give", "want", "deserves")
               for w in before) and clause.qkind is None and clause.condition is None:
            negated = any(w in P.NEGATORS for w in before)
            self._add(Intent.hold if negated else Intent.restart, 0.7, [(cue.start, cue.end)], cue.start)

    # -- hold, correction, verify -----------------------------------------------------------------------

    def _next_verb(self, after: int, clause: _Clause) -> _Cue | None:
        for cue in self.cues:
            if cue.start >= after and cue.start < clause.end and cue.label in _VERB_LABELS:
                return cue
        return None

    def _hold(self, cue: _Cue) -> None:
        clause = self._clause(cue.start)
        words = self.low[cue.start : cue.end]
        spans = [(cue.start, cue.end)]
        end = cue.end
        own: tuple[int, int] | None = (cue.start, cue.end)
        if words[-1] in P.HOLD_ABSORBS or (words[0] in ("no", "there") and words[-1] == "to"):
            verb = self._next_verb(cue.end, clause)
            if verb is not None and verb.start - cue.end <= 2:
                self.used.update(range(verb.start, verb.end))
                spans.append((verb.start, verb.end))
                end = verb.end
            elif words[-1] == "to":
                return  # "no need to re-import it": not about a server
        obj = self._hold_object(cue, words, end, clause)
        if obj.cls == "nonserver":
            return
        if words[0] in ("wait", "give", "be") and clause.qkind is not None:
            return
        self.used.update(range(cue.start, cue.end))
        self._add(Intent.hold, 0.9, spans, cue.start, obj.mention, own=own)

    def _hold_object(self, cue: _Cue, words: list[str], end: int, clause: _Clause) -> _Object:
        if words[0] in ("leave", "leaving", "keep", "keeping", "let"):
            inner = range(cue.start + 1, cue.end - 1)
            for i in inner:
                if self._is_entity(i) or self.low[i] in P.SERVER_NOUNS:
                    return _Object("server", self._span_text(cue.start + 1, i + 1))
                if self.low[i] in P.NONSERVER_NOUNS:
                    return _Object("nonserver")
                if self.low[i] in P.OBJECT_PRONOUNS:
                    return _Object("pronoun", self.low[i])
            return _Object("none")
        if words[0] in ("wait", "give", "be", "hands", "hold"):
            return _Object("none")
        return self._scan_object(end, clause, first_word=False)

    def _correction_phrase(self, cue: _Cue) -> None:
        clause = self._clause(cue.start)
        spans = [(cue.start, cue.end)]
        verb = self._next_verb(cue.end, clause)
        if verb is not None:
            self.used.update(range(verb.start, verb.end))
            spans.append((verb.start, verb.end))
        self.used.update(range(cue.start, cue.end))
        self._add(Intent.correction, 0.9, spans, cue.start)

    def _verify(self, cue: _Cue) -> None:
        clause = self._clause(cue.start)
        ctx = self._context(cue.start, clause)
        if ctx.subject is not None or ctx.negated:
            return
        clause.verify = cue.start
        index = clause.index
        if index + 1 < len(self.clauses):
            nxt = self.clauses[index + 1]
            if nxt.sentence == clause.sentence and nxt.condition in ("if", "whether"):
                nxt.verify = nxt.start

    def _question_noun(self, cue: _Cue) -> None:
        clause = self._clause(cue.start)
        if clause.qkind not in ("plain", "suggest", "why", "opinion"):
            return
        if cue.label == "QHOW":
            named = any(self._is_entity(i) or self.low[i] in P.OBJECT_SERVER_NOUNS
                        for i in range(cue.start, cue.end))
            if named:
                self._question([(cue.start, cue.end)], cue.start)
            return
        if self._sentence_has_server(cue.start, ports=False) or self._only_words(clause, cue):
            self._question([(cue.start, cue.end)], cue.start)

    def _only_words(self, clause: _Clause, cue: _Cue) -> bool:
        rest = [w for i, w in enumerate(self.low[clause.start : clause.end], clause.start)
                if not (cue.start <= i < cue.end) and any(ch.isalnum() for ch in w)]
        return not rest

    # -- states ---------------------------------------------------------------------------------------------

    def _state(self, cue: _Cue) -> None:
        clause = self._clause(cue.start)
        label = cue.label
        tier = P.STATE_TIER[label]
        ready = label.startswith("READY")
        words = self.low[cue.start : cue.end]
        if tier != "USE" and words[0] in P.NOMINAL_DOWN and cue.start > 0 and self.low[
                cue.start - 1] in _DETERMINERS:
            return
        negated = past = copula = already = hypothetical = False
        j = cue.start - 1
        while j >= clause.start:
            w = self.low[j]
            if w in P.HYPOTHETICAL:
                hypothetical = True
            if w in P.NEGATORS:
                negated = True
            elif w == "already":
                already = True
            elif w in P.COPULAS or w in P.AUXILIARIES or w == "m":
                copula = True
                past = past or w in P.PAST_COPULAS
                if w in ("its", "it's"):
                    break
            elif w in P.STATE_SKIP or (w == "no" and j + 1 < self.n and self.low[j + 1] == "longer"):
                pass
            else:
                break
            j -= 1
        subject = "none"
        mention: str | None = None
        head = j if j >= clause.start else None
        if head is not None and self.low[head] in P.NEGATIVE_SUBJECTS:
            negated = not negated
            subject, mention = "pronoun", None
            head = None
        if head is not None and self.low[head] in ("its", "it's"):
            subject, mention = "pronoun", "it"
        elif head is not None:
            if tier == "USE":
                subject = "ok"
            elif copula or self._subject_head(head) or tier == "REPORT":
                subject, mention = self._subject_class(head, clause)
            elif self.low[head] in P.REPORT_VERBS and not ready:
                subject, mention = ("none", None)
                if head > clause.start:
                    subject, mention = self._subject_class(head - 1, clause)
                if subject == "blocked" and tier == "S":
                    subject = "none"  # "I'm getting connection refused": the user reports the server's answer
            else:
                return
        if not self._subject_allowed(tier, subject, head, cue):
            return
        if hypothetical and not negated and clause.qkind is None:
            return  # "it should work now": an expectation
        if words == ["work"] and subject == "none":
            return  # "great work", "work on X"
        if words[0] in ("works", "work") and head is not None and self.low[head] == "that":
            return  # "that works": agreement, not a server
        before = self.low[max(clause.start, cue.start - 3) : cue.start]
        able = any(w in ("can", "could", "able", "ca") for w in before)
        if words[0] in ("reach", "access", "hit", "curl", "ping", "query", "open") and not able:
            return  # only "I can reach it" says it is up; "hit it with the benchmark" is an instruction
        if not self._follower_ok(cue, clause, subject, copula):
            return
        if tier == "REPORT" and not self._sentence_has_server(cue.start):
            return
        span = [(cue.start, cue.end)]
        if clause.verify is not None and clause.verify <= cue.start:
            self._question(span, cue.start, mention)
            return
        if clause.qkind in ("plain", "suggest", "request", "opinion"):
            self._question(span, cue.start, mention)
            return
        if clause.condition is not None:
            return
        is_ready = ready != negated
        strength = {"S": 0.9, "G": 0.8, "W": 0.7, "USE": 0.85, "REPORT": 0.7}[tier]
        if subject == "none" and words == ["ready"] and not negated:
            strength = 0.9
        if negated and not ready:
            self._add(Intent.correction, 0.7, span, cue.start)
        self._add(Intent.ready if is_ready else Intent.not_ready, strength, span, cue.start, mention,
                  past=past and is_ready)
        already = already or "already" in self.low[cue.end : min(clause.end, cue.end + 4)]
        if already and is_ready:
            self._add(Intent.correction, 0.75, [(j + 1, cue.end)] if j + 1 < cue.start else span, cue.start)
        if clause.qkind == "why":
            self._question(span, cue.start, mention)

    def _subject_allowed(self, tier: str, subject: str, head: int | None, cue: _Cue) -> bool:
        if tier == "USE":
            return True
        if subject in ("blocked", "nonserver"):
            return tier == "REPORT" and subject == "blocked" and head is not None and self.low[head] in (
                "i", "we", "m", "'m")
        if tier == "S":
            return True
        if tier in ("G", "REPORT"):
            return subject in ("server", "pronoun", "none")
        return subject == "server"  # W

    def _follower_ok(self, cue: _Cue, clause: _Clause, subject: str, copula: bool) -> bool:
        """Reject verb uses of state words: "up to you", "running the tests", "ready for review"."""
        nxt = self.low[cue.end] if cue.end < clause.end else ""
        word = self.low[cue.start]
        if cue.end - cue.start == 1 and word == "up" and nxt == "to":
            return False
        if word == "ready" and nxt in ("to", "for") and cue.end - cue.start == 1:
            after = self.low[cue.end + 1] if cue.end + 1 < self.n else ""
            return subject == "server" or (subject in ("pronoun", "none") and after in _READY_FOR_OK)
        if nxt in _DETERMINERS and word not in ("serving", "serves", "loading", "hitting", "using"):
            return subject not in ("none",) and word not in ("running", "working")
        if word in ("working", "works", "work") and nxt in ("on", "with", "for"):
            return cue.end + 1 < clause.end and self._is_entity(cue.end + 1)
        if subject == "none" and not copula and nxt and nxt not in _BARE_FOLLOWERS and any(
                ch.isalnum() for ch in nxt) and not self._is_entity(cue.end):
            return cue.end in self.cue_starts  # "502 bad gateway"; not "responsive layout", "up next"
        return True

    # -- sentence-level cues --------------------------------------------------------------------------

    def _bare_wait(self, sentences: list[tuple[int, int]]) -> None:
        for start, end in sentences:
            words = [i for i in range(start, end) if any(ch.isalnum() for ch in self.low[i])]
            if words and self.low[words[-1]] == "wait" and words[-1] not in self.used:
                clause = self._clause(words[-1])
                if clause.end - clause.start <= 2 and clause.qkind is None:
                    self._add(Intent.hold, 0.6, [(words[-1], words[-1] + 1)], words[-1])

    def _correction_openers(self, sentences: list[tuple[int, int]]) -> None:
        """``No, it's still up``: a denial followed by a state (in its sentence or the next)."""
        state_sentences: dict[int, list[_Hit]] = {}
        for hit in self.hits:
            if hit.intent in (Intent.ready, Intent.not_ready):
                state_sentences.setdefault(self.clauses[hit.clause].sentence, []).append(hit)
        for index, (start, end) in enumerate(sentences):
            i = start
            while i < end - 1 and self.low[i] in ("oh", "well", "um", "hmm", "ah", "uh"):
                i += 1
            if self.low[i] not in P.CORRECTION_OPENERS:
                continue
            nxt = self.low[i + 1] if i + 1 < end else ""
            if nxt in P.NOT_CORRECTION_AFTER_NO:
                continue
            if self.low[i] == "wrong" and nxt in ("port", "server", "one", "instance", "box", "machine"):
                continue  # already a correction phrase
            followers = state_sentences.get(index)
            if not followers and end - start <= 3:  # "No. It's up."
                followers = state_sentences.get(index + 1)
            if followers:
                self._add(Intent.correction, 0.85, [(i, i + 1), *followers[0].spans], i)

    # -- targets and result ---------------------------------------------------------------------------------

    def _groups(self, clauses: list[_Clause], cues: list[_Cue]) -> None:
        """Clauses that only list servers ("…, vllm and tgi") join the clause before them."""
        cue_tokens = {i for c in cues for i in range(c.start, c.end)}
        group = -1
        previous_sentence = -1
        for clause in clauses:
            words = range(clause.start, clause.end)
            orphan = clause.sentence == previous_sentence and not any(i in cue_tokens for i in words) and all(
                self._is_entity(i) or self.low[i] in P.OBJECT_SKIP or self.low[i] in P.SERVER_NOUNS
                or self.low[i] in ("and", "or", "&", "plus", "too", "also", "on", "at", ",")
                for i in words)
            if not orphan:
                group += 1
            clause.group = max(group, 0)
            previous_sentence = clause.sentence

    def _targets(self) -> list[Target]:
        """Give each entity to the hit nearest before it in its clause group (else the first after it)."""
        by_group: dict[int, list[int]] = {}
        questions: dict[int, list[int]] = {}
        for h, hit in enumerate(self.hits):
            clause = self.clauses[hit.clause]
            if hit.intent == Intent.question:
                questions.setdefault(clause.sentence, []).append(h)
            else:
                by_group.setdefault(clause.group, []).append(h)
        per_hit: dict[int, list[Entity]] = {}
        for k, ent in enumerate(self.entities):
            tokens = [i for i in self.entity_tokens[k] if self.entity_at[i] == k]
            if not tokens:
                continue
            at = tokens[0]
            clause = self.clauses[self.clause_of[at]]
            candidates = by_group.get(clause.group, []) + questions.get(clause.sentence, [])
            inside = [h for h in candidates
                      if (own := self.hits[h].own) is not None and own[0] <= at < own[1]]
            before = [self.hits[h].anchor for h in candidates if self.hits[h].anchor <= at]
            after = [self.hits[h].anchor for h in candidates if self.hits[h].anchor > at]
            if inside:
                chosen = inside[:1]
            elif before or after:
                anchor = max(before) if before else min(after)
                chosen = [h for h in candidates if self.hits[h].anchor == anchor]
            else:
                continue
            for h in chosen:
                per_hit.setdefault(h, []).append(ent)
        out: list[Target] = []
        for h, hit in enumerate(self.hits):
            ents = per_hit.get(h, [])
            out.append(Target(
                kinds=tuple(dict.fromkeys(e.value for e in ents if e.label == EntityLabel.kind)),
                ports=tuple(dict.fromkeys(int(e.value) for e in ents if e.label == EntityLabel.port)),
                hosts=tuple(dict.fromkeys(e.value for e in ents if e.label == EntityLabel.host)),
                units=tuple(dict.fromkeys(e.value for e in ents if e.label == EntityLabel.unit)),
                mention=None if ents else hit.mention,
                text=" ".join(dict.fromkeys(e.text for e in sorted(ents, key=lambda e: e.start)))
                if ents else (hit.mention or ""),
            ))
        return out

    def _result(self, sentences: list[tuple[int, int]]) -> MessageReading:
        corrected = any(h.intent == Intent.correction for h in self.hits)
        self.hits = [h for h in self.hits if not h.past or corrected]
        # a question sentence is asked once, whatever number of cues it has
        seen_questions: set[int] = set()
        kept: list[_Hit] = []
        for hit in self.hits:
            if hit.intent == Intent.question:
                sentence = self.clauses[hit.clause].sentence
                if sentence in seen_questions:
                    continue
                seen_questions.add(sentence)
            kept.append(hit)
        self.hits = kept
        targets = self._targets() if self.hits else []
        hits = tuple(
            IntentHit(hit.intent, hit.strength, self._evidence(hit), target)
            for hit, target in zip(self.hits, targets, strict=True)
        )
        return MessageReading(
            intents=frozenset(h.intent for h in hits),
            hits=hits,
            entities=tuple(self.entities),
            skipped=self.prep.skipped,
            truncated=self.prep.truncated,
        )

    def _evidence(self, hit: _Hit) -> tuple[Evidence, ...]:
        out: list[Evidence] = []
        for start, end in sorted(set(hit.spans)):
            s, e = self.starts[start], self.ends[end - 1]
            out.append(Evidence(s, e, self.text[s:e]))
        return tuple(out)


__all__ = [
    "CACHE_SIZE",
    "HEAD_CHARS",
    "INSTRUCTIONS",
    "MAX_ANALYSED_CHARS",
    "TAIL_CHARS",
    "Entity",
    "EntityLabel",
    "Evidence",
    "Intent",
    "IntentHit",
    "MessageReading",
    "Skipped",
    "Target",
    "clear_cache",
    "read_message",
    "read_messages",
]
