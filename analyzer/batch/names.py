"""Output file names for sessions: readable, safe whatever the input names are, unique, stable."""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_STEM = 80
"""Characters kept from the relative path; the hash suffix keeps names unique past that."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(relative: str, key: str) -> str:
    """``claude-code/v2.0 kill.jsonl`` → ``claude-code_v2.0_kill.jsonl-1a2b3c4d5e``.

    Only ``[A-Za-z0-9._-]``, never a leading dot or dash, never ``..``; at most ``MAX_STEM``
    characters of the path, then a hash of ``key`` (the session's absolute path and member), so two
    sessions with the same file name in different folders, or names that sanitize alike, differ,
    and a session keeps its name from run to run.
    """
    ascii_text = unicodedata.normalize("NFKD", relative).encode("ascii", "ignore").decode()
    stem = _UNSAFE.sub("_", ascii_text.replace("/", "_").replace("\\", "_"))
    stem = re.sub(r"_{2,}", "_", re.sub(r"\.{2,}", ".", stem)).strip("._-")[:MAX_STEM].rstrip("._-") or "session"
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{stem}-{digest}"
