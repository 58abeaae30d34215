"""Reads a user message for server-lifecycle evidence: readiness, instructions, corrections.

``read_message("Restart sglang to serve on *:30001")`` says the user asks for a restart and that the
restart names sglang and port 30001. The reader is rule-based: ``spacy.blank("en")`` (tokenizer only,
never a downloaded model) plus one ``Matcher`` of cue phrases, one ``PhraseMatcher`` of server kinds
and regexes for ports, hosts and units (``patterns``). A cue becomes an intent only after its
context is checked: negation ("don't restart it" is ``hold``), questions ("is it up?" is
``question``), the subject ("I'm ready" is not server readiness), the object ("restart the test
suite" is no server) and conditions ("if it crashes, restart it": the crash is no state). A
replacement ("replace the old TGI container with one for mistral", "switch from vllm to sglang",
"get rid of the vllm server", "free port 8080") stops the server it plainly names and launches the
one after "with"/"for"/"to"; "replace the import" names no server and is nothing. A target named
by words alone ("the api container", "the backend and the frontend") keeps them as its ``mention``:
the world resolves role words to its instances (``build.messages``).

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

The package, in reading order: ``pastes`` (what is skipped), ``pipeline`` (the blank spaCy
tokenizer and matchers over the ``patterns`` data), ``entities`` and ``words`` (ports, hosts,
kinds, units over the tokens), ``clauses`` (cues, sentences, clauses, question kinds), ``scan``
(the reading in progress), ``objects``, ``verbs``, ``states`` and ``intents`` (each cue in its
context), ``targets`` (which servers each intent is about), ``reader`` (the memo and the batch).
``model`` holds the types the reading is made of.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer._lazy import lazy_exports
from analyzer.lifecycle.language.model import (
    INSTRUCTIONS,
    Entity,
    EntityLabel,
    Evidence,
    Intent,
    IntentHit,
    MessageReading,
    Skipped,
    Target,
)
from analyzer.lifecycle.language.reader import CACHE_SIZE, clear_cache, read_message, read_messages

if TYPE_CHECKING:  # resolved on first use: a process whose readings are all kept never loads them
    from analyzer.lifecycle.language.pastes import HEAD_CHARS as HEAD_CHARS
    from analyzer.lifecycle.language.pastes import MAX_ANALYSED_CHARS as MAX_ANALYSED_CHARS
    from analyzer.lifecycle.language.pastes import TAIL_CHARS as TAIL_CHARS
    from analyzer.lifecycle.language.pipeline import pipeline as _pipeline  # noqa: F401 (bench/scale.py, tests)

_PASTES = "analyzer.lifecycle.language.pastes"
_lazy_pastes = lazy_exports(__name__, dict.fromkeys(("HEAD_CHARS", "MAX_ANALYSED_CHARS", "TAIL_CHARS"), _PASTES))


def __getattr__(name: str) -> Any:
    if name == "_pipeline":
        from analyzer.lifecycle.language.pipeline import pipeline

        return pipeline
    return _lazy_pastes(name)


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
