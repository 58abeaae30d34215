"""Word lists, spaCy Matcher patterns and entity regexes for reading user messages about servers.

Data only: ``pipeline.py`` compiles these into one ``Matcher`` (cues), one ``PhraseMatcher``
(server kinds) and a few regexes (ports, hosts, units). Everything is lowercase; the matchers
compare on ``LOWER``. There is no lemmatizer in ``spacy.blank("en")``, so verb forms are listed.
"""

from __future__ import annotations

import re
from typing import Any, Final

TokenPattern = list[dict[str, Any]]

# --- verbs ----------------------------------------------------------------------------------------
# lemma -> (base, 3rd person, past, gerund). Typos that really occur are lemmas of their own.
_FORMS: Final[dict[str, tuple[str, str, str, str]]] = {
    "restart": ("restart", "restarts", "restarted", "restarting"),
    "restrat": ("restrat", "restrats", "restrated", "restrating"),
    "re-start": ("re-start", "re-starts", "re-started", "re-starting"),
    "relaunch": ("relaunch", "relaunches", "relaunched", "relaunching"),
    "re-launch": ("re-launch", "re-launches", "re-launched", "re-launching"),
    "reboot": ("reboot", "reboots", "rebooted", "rebooting"),
    "bounce": ("bounce", "bounces", "bounced", "bouncing"),
    "redeploy": ("redeploy", "redeploys", "redeployed", "redeploying"),
    "re-deploy": ("re-deploy", "re-deploys", "re-deployed", "re-deploying"),
    "respawn": ("respawn", "respawns", "respawned", "respawning"),
    "launch": ("launch", "launches", "launched", "launching"),
    "start": ("start", "starts", "started", "starting"),
    "serve": ("serve", "serves!", "served", "serving!"),
    "boot": ("boot", "boots", "booted", "booting"),
    "run": ("run", "runs!", "ran!", "running!"),
    "deploy": ("deploy", "deploys", "deployed", "deploying"),
    "host": ("host", "hosts!", "hosted!", "hosting!"),
    "spin": ("spin", "spins", "spun", "spinning"),
    "bring": ("bring", "brings", "brought", "bringing"),
    "fire": ("fire", "fires", "fired", "firing"),
    "stand": ("stand", "stands", "stood", "standing"),
    "kick": ("kick", "kicks", "kicked", "kicking"),
    "get": ("get", "gets", "got", "getting"),
    "turn": ("turn", "turns", "turned", "turning"),
    "kill": ("kill", "kills", "killed", "killing"),
    "kil": ("kil", "kils", "kiled", "kiling"),
    "pkill": ("pkill", "pkills", "pkilled", "pkilling"),
    "killall": ("killall", "killalls!", "killalled!", "killalling!"),
    "stop": ("stop", "stops", "stopped", "stopping"),
    "terminate": ("terminate", "terminates", "terminated", "terminating"),
    "halt": ("halt", "halts", "halted", "halting"),
    "shutdown": ("shutdown", "shutdowns!", "shutdowned!", "shutdowning!"),
    "teardown": ("teardown", "teardowns!", "teardowned!", "teardowning!"),
    "shut": ("shut", "shuts", "shut!", "shutting"),
    "take": ("take", "takes", "took", "taking"),
    "tear": ("tear", "tears", "tore", "tearing"),
    "replace": ("replace", "replaces", "replaced", "replacing"),
    "swap": ("swap", "swaps", "swapped", "swapping"),
    "switch": ("switch", "switches", "switched", "switching"),
    "free": ("free", "frees", "freed", "freeing"),
}
"""A form ending in ``!`` is not a verb form here (it is a state word or not English)."""

FORM_KINDS: Final[tuple[str, ...]] = ("base", "3sg", "past", "ger")


def verb_forms() -> dict[str, tuple[str, str]]:
    """Every listed verb form -> (lemma, form kind)."""
    out: dict[str, tuple[str, str]] = {}
    for lemma, forms in _FORMS.items():
        for form, kind in zip(forms, FORM_KINDS, strict=True):
            if not form.endswith("!"):
                out.setdefault(form, (lemma, kind))
    out["shut"] = ("shut", "base")
    out["torn"] = ("tear", "past")
    out["taken"] = ("take", "past")
    out["brought"] = ("bring", "past")
    return out


def _forms_of(*lemmas: str) -> list[str]:
    return [f for lemma in lemmas for f in _FORMS[lemma] if not f.endswith("!")]


RESTART_LEMMAS: Final = frozenset(
    {"restart", "restrat", "re-start", "relaunch", "re-launch", "reboot", "bounce", "redeploy",
     "re-deploy", "respawn"}
)
GENERIC_LEMMAS: Final = frozenset({"run", "deploy", "host"})
"""Verbs that mean launching a server only when their object is plainly a server."""
NEEDS_OBJECT_LEMMAS: Final = frozenset({"start", "stop", "kill", "kil", "serve", "boot", "terminate", "halt",
                                        "pkill", "killall", "bounce", "run", "deploy", "host"})
"""Verbs that are too vague alone ("stop!", "start") and need an object to count."""

_WILD: Final[dict[str, Any]] = {
    "IS_PUNCT": False,
    "IS_SPACE": False,
    "LOWER": {"NOT_IN": ["and", "then", "but", "or", "'s", "s", "us", "me", "to", "if", "when", "so"]},
    "OP": "{0,4}",
}
"""Up to four object words between a phrasal verb and its particle ("bring the api back up")."""


def _one(*words: str) -> dict[str, Any]:
    return {"LOWER": {"IN": list(words)}}


def _opt(*words: str) -> dict[str, Any]:
    return {"LOWER": {"IN": list(words)}, "OP": "?"}


_NEG: Final = ("n't", "not", "nt")

VERB_PATTERNS: Final[dict[str, list[TokenPattern]]] = {
    "V_RESTART": [
        [_one(*_forms_of(*sorted(RESTART_LEMMAS)))],
    ],
    "V_LAUNCH": [
        [_one(*_forms_of("launch", "start", "serve", "boot", "run", "deploy", "host"))],
        [_one(*_forms_of("spin", "bring", "fire", "stand", "boot", "start")), _WILD, _one("up")],
        [_one(*_forms_of("bring")), _WILD, _one("back"),
         _opt("up", "online")],
        [_one(*_forms_of("kick")), _WILD, _one("off")],
        [_one(*_forms_of("turn")), _WILD, _one("on")],
        [_one(*_forms_of("get")), _WILD, _one("running", "up", "going", "serving")],
        [_one("compose", "docker-compose"), _one("up")],
    ],
    "V_STOP": [
        [_one(*_forms_of("kill", "kil", "pkill", "killall", "stop", "terminate", "halt", "shutdown",
                         "teardown"))],
        [_one(*_forms_of("shut", "take", "tear", "bring")), _WILD, _one("down")],
        [_one(*_forms_of("turn")), _WILD, _one("off")],
        [_one(*_forms_of("kill")), _WILD, _one("off")],
    ],
    # the object follows the whole cue and must plainly be a server (``verbs.replacement``)
    "V_REPLACE": [
        [_one(*_forms_of("replace", "swap"))],
        [_one(*_forms_of("swap")), _one("out")],
        [_one(*_forms_of("switch")), _one("from", "off")],
        [_one(*_forms_of("get")), _one("rid"), _one("of")],
        [_one(*_forms_of("free")), _opt("up")],
    ],
}
REPLACE_JOINERS: Final[dict[str, frozenset[str]]] = {
    "replace": frozenset({"with", "by"}), "swap": frozenset({"for", "with"}), "switch": frozenset({"to", "for"}),
}
"""``replace X with Y``, ``swap X for Y``, ``switch from X to Y``: the word that starts the new server."""

# --- states -----------------------------------------------------------------------------------------
# Tiers: S words are about servers ("up", "serving"); G words are generic ("ready", "working") and need
# a server, a pronoun or no subject; W words ("fine", "good") need a named server.
STATE_PATTERNS: Final[dict[str, list[TokenPattern]]] = {
    "READY_S": [
        [_one("up", "serving", "serves", "listening", "online", "live", "healthy", "reachable", "responding",
              "responds", "responsive", "alive", "up-and-running", "answering", "answers")],
        [_one("up"), _one("and"), _one("running", "serving")],
        [_one("back"), _one("up", "online")],
        [_one("came", "comes", "come", "went"), _one("up", "online")],
        [_one("came", "comes", "come", "coming"), _one("back"), _opt("up", "online")],
        [_one("returns", "returned", "returning", "gives", "gave", "answers", "answered"), _opt("a", "an"),
         _one("200", "ok")],
        [_one("200"), _one("ok")],
        [_one("good"), _one("to"), _one("go")],
    ],
    "READY_G": [
        [_one("ready", "working", "works", "worked", "work", "running", "loaded")],
        [_one("finished", "done"),
         _one("loading", "starting", "booting", "capturing", "warming", "compiling")],
        [_one("fully"), _one("loaded")],
    ],
    "READY_W": [
        [_one("fine", "good", "ok", "okay", "alright", "stable")],
    ],
    "READY_USE": [
        [_one("using", "hitting", "querying", "calling"),
         _one("it", "sglang", "vllm", "ollama", "tgi", "that")],
        [_one("using", "hitting", "querying", "calling"), _one("the"),
         _one("server", "endpoint", "api", "model")],
        [_one("reach", "access", "hit", "curl", "ping", "query", "open"),
         _one("it", "sglang", "vllm", "ollama", "tgi")],
        [_one("reach", "access", "hit", "curl", "ping", "query", "open"), _one("the"),
         _one("server", "endpoint", "api", "model", "ui", "page", "site", "app", "dashboard")],
    ],
    "DOWN_S": [
        [_one("down", "offline", "unreachable", "unresponsive", "502", "503", "504", "oom", "oomed", "ooming",
              "oom-killed", "oom'd", "502ing", "503ing", "500ing", "500s", "segfault", "segfaulted",
              "segfaults", "crashloop", "crashlooping",
              "timeouts")],
        [_one("connection"), _one("refused", "reset")],
        [_one("refused", "refusing", "refuses"), _one("connection", "connections")],
        [_one("bad"), _one("gateway")],
        [_one("gateway"), _one("timeout")],
        [_one("timed", "times", "timing"), _one("out")],
        [_one("went", "goes", "go", "going"), _one("down")],
        [_one("fell", "falls", "falling"), _one("over")],
        [_one("crash"), _one("loop", "looping")],
        [_opt("ran", "runs", "running", "run"), _one("out"), _one("of"), _one("memory")],
        [_opt("address"), _one("already"), _one("in"), _one("use")],
        [_one("no"), _one("response")],
        [_one("keeps", "keep", "kept"),
         _one("crashing", "dying", "restarting", "failing", "exiting", "oom-ing",
                                           "ooming", "segfaulting", "hanging", "timing")],
        [_one("wo", "does", "did", "do", "is", "'s", "ca", "can", "could"), _one(*_NEG),
         _one("load", "loading", "connect", "reach")],
        [_one("wont", "doesnt", "didnt", "cant", "cannot", "couldnt"),
         _one("load", "loading", "connect", "reach")],
        [_one("stopped", "stops"), _one("responding", "working", "serving", "answering")],
    ],
    "DOWN_G": [
        [_one("crashed", "crashes", "crashing", "crash", "died", "dies", "dead", "dying", "broken", "broke",
              "failing", "failed", "fails", "hung", "hangs", "hanging", "stuck", "frozen", "exited", "exits",
              "stalls", "stalled", "stalling",
              "erroring", "errored")],
        [_one("still"), _one("loading", "starting", "booting", "warming", "initializing", "compiling",
                             "capturing"), _opt("up")],
        [_one("is", "'s", "are", "'re"), _opt("still"), _one("loading", "starting", "booting", "warming",
                                                               "initializing"), _opt("up")],
    ],
    "DOWN_REPORT": [
        [_one("get", "gets", "got", "getting", "see", "seeing", "throws", "throwing", "threw", "returns",
              "returning", "hit", "hitting"),
         _opt("a", "an", "the", "this", "that", "these", "same", "an"), _opt("weird", "new", "same", "500"),
         _one("error", "errors", "exception", "exceptions", "500", "500s", "502s", "timeout", "timeouts",
              "traceback")],
        [_one("errors"), _one("out")],
    ],
}

STATE_TIER: Final[dict[str, str]] = {
    "READY_S": "S", "READY_G": "G", "READY_W": "W", "READY_USE": "USE",
    "DOWN_S": "S", "DOWN_G": "G", "DOWN_REPORT": "REPORT",
}
NOMINAL_DOWN: Final = frozenset({"502", "503", "504", "oom", "timeouts", "segfault", "crash", "crashloop"})
"""Down words that can be nouns: after "the"/"that" they name an event, not assert a state."""

# --- hold, correction, verify, question nouns ----------------------------------------------------------
_GER_ACTIONS: Final = (
    "restarting", "relaunching", "re-launching", "rebooting", "bouncing", "redeploying", "killing",
    "stopping", "launching", "starting", "touching", "messing", "poking", "fiddling", "interrupting",
    "respawning", "terminating", "shutting", "tearing",
)

HOLD_PATTERNS: Final[list[TokenPattern]] = [
    [_one("leave", "leaving"), _WILD,
     _one("alone", "running", "up", "be", "as-is", "untouched", "intact", "going",
                                             "serving")],
    [_one("leave", "leaving"), _WILD, _one("as"), _one("is")],
    [_one("keep", "keeping"), _WILD, _one("running", "up", "alive", "going", "serving")],
    [_one("let"), {"LOWER": {"NOT_IN": ["'s", "s", "us", "me"]}, "IS_PUNCT": False, "OP": "{1,3}"},
     _one("run", "finish", "load", "be", "warm", "settle", "breathe", "cook", "come")],
    [_one("hands"), _one("off")],
    [_one("hold"), _one("off"), _opt("on"), _opt(*_GER_ACTIONS)],
    [_one("stop", "quit", "avoid", "stopping"), _one(*_GER_ACTIONS)],
    [_one("without"), _one(*_GER_ACTIONS)],
    [_one("no"), _one("app", "server", "service", "services", "container", "containers", "backend", "stack"),
     _one("start", "starts", "startup", "restart", "restarts", "launch", "launches")],
    [_one("no"), _opt("more"), _one("restart", "restarts", "relaunch", "relaunches", "reboot", "reboots",
                                     "kills", "restarting", "relaunching", "rebooting", "killing")],
    [_one("no"), _one("need"), _one("to")],
    [_one("there"), _one("'s", "is"), _one("no"), _one("need"), _one("to")],
    [_one("do"), _one(*_NEG), _one("touch", "mess", "bother", "interrupt", "disturb", "poke", "fiddle")],
    [_one("dont", "never"), _one("touch", "mess", "bother", "interrupt", "disturb", "poke", "fiddle")],
    [_one("wait"), _one("for", "until", "till")],
    [_one("wait"), _opt("a"), _one("bit", "minute", "sec", "second", "moment", "few")],
    [_one("give"), _one("it"), _opt("a"), _one("minute", "sec", "second", "moment", "bit", "few", "while")],
    [_one("be"), _one("patient")],
]
HOLD_ABSORBS: Final = frozenset({"to", "without", "on", "off"})
"""A hold phrase ending in one of these takes the next instruction verb as its own ("no need to kill")."""

CORRECTION_PATTERNS: Final[list[TokenPattern]] = [
    [_one("did"), _one(*_NEG), _one("need", "have"), _one("to")],
    [_one("didnt"), _one("need", "have"), _one("to")],
    [_one("there"), _one("was", "were"), _one("no"), _one("need")],
    [_one("no"), _one("need"), _one("to"), _one("have")],
    [_one("was", "is", "'s"), _one(*_NEG), _one("necessary", "needed")],
    [_one("should"), _one(*_NEG), _one("have", "'ve")],
    [_one("shouldnt", "shouldn't"), _one("have", "'ve")],
    [_one("why"), _one("did", "would", "'d", "do", "are", "were", "have"), _one("you", "u")],
    [_one("why'd"), _one("you", "u")],
    [_one("who"), _one("told", "asked"), _one("you", "u")],
    [_one("i"), _one("never"), _one("asked", "told")],
    [_one("i"), _one("did"), _one(*_NEG), _one("ask", "tell")],
    [_one("that", "this"), _one("is", "'s"), _opt("just", "simply"), _one("wrong", "incorrect", "false")],
    [_one("that", "this"), _one("is", "'s"), _one(*_NEG), _one("right", "true", "correct")],
    [_one("thats"), _one("wrong", "incorrect", "false")],
    [_one("not"), _one("true")],
    [_one("you"), _one("are", "'re"), _one("wrong", "mistaken")],
    [_one("wrong"), _one("port", "server", "one", "instance", "box", "machine", "host", "node", "gpu")],
    [_one("unnecessarily", "needlessly")],
    [_one("the", "this", "that"), _one("whole", "entire"), _one("time")],
    [_one("all"), _one("along")],
    [_one("for"), _one("no"), _one("reason")],
]

VERIFY_PATTERNS: Final[list[TokenPattern]] = [
    [_one("check", "checking", "verify", "confirm", "ensure", "see", "test")],
    [_one("make"), _one("sure")],
    [_one("find"), _one("out")],
]

QUESTION_NOUN_PATTERNS: Final[list[TokenPattern]] = [
    [_one("status", "port", "pid", "health", "uptime", "state", "address", "url")],
]
QUESTION_HOW_PATTERNS: Final[list[TokenPattern]] = [
    [_one("how"), _one("is", "'s", "are", "'re"), _WILD, _one("doing", "going", "looking", "holding")],
]
"""``how's the server doing?``: a question about state when it names a server."""

def fixed_phrases(pattern: TokenPattern) -> list[tuple[str, ...]] | None:
    """All word sequences a wildcard-free pattern matches, or None if it has a wildcard.

    Fixed phrases go to a hash-based PhraseMatcher, which is much faster than the Matcher's
    per-token predicate checks; only patterns with wildcards stay in the Matcher.
    """
    phrases: list[tuple[str, ...]] = [()]
    for spec in pattern:
        words = spec.get("LOWER", {}).get("IN") if isinstance(spec.get("LOWER"), dict) else None
        op = spec.get("OP")
        if words is None or op not in (None, "?"):
            return None
        grown = [(*p, w) for p in phrases for w in words]
        phrases = phrases + grown if op == "?" else grown
    return [p for p in phrases if p]


# --- word classes ---------------------------------------------------------------------------------------
SERVER_NOUNS: Final = frozenset({
    "server", "servers", "srv", "endpoint", "endpoints", "api", "service", "services", "router", "backend",
    "frontend", "app", "site", "website", "page", "ui", "dashboard", "instance", "instances", "container",
    "containers", "model", "engine", "deployment", "worker", "workers", "daemon", "process", "processes",
    "launch", "one", "prefill", "decode", "port", "health", "healthcheck", "check", "curl", "node", "box",
    "machine", "pod", "proxy", "gateway", "webserver", "web", "inference", "serving", "stack", "cluster",
    "everything", "db", "database", "pd", "listener", "dev", "restart", "relaunch", "reboot", "redeploy",
    "deploy",
})
"""Words that make a subject or an object a server (plus any entity)."""
OBJECT_SERVER_NOUNS: Final = SERVER_NOUNS - {"model", "launch", "one", "check", "curl", "health", "page",
                                              "port", "everything", "serving", "inference", "dev", "restart",
                                              "relaunch", "reboot", "redeploy", "deploy"}
"""Objects that make a generic verb ("run", "deploy") about a server."""

NONSERVER_NOUNS: Final = frozenset({
    "test", "tests", "suite", "benchmark", "benchmarks", "bench", "build", "builds", "ci", "pr", "prs",
    "branch", "refactor", "refactoring", "migration", "training", "script", "scripts", "notebook",
    "conversation", "chat", "task", "tasks", "subagent", "subagents", "agent", "agents", "docs", "doc",
    "readme", "code", "client", "eval", "evals", "evaluation", "linter", "lint", "typecheck", "compile",
    "kernel", "plan", "design", "analysis", "review", "loop", "fix", "patch", "commit", "job", "jobs",
    "experiment", "sweep", "over", "scratch", "parser", "tokenizer", "function", "file", "files", "work",
    "thread", "discussion", "session", "search", "download", "upload", "install", "installation",
    "compilation", "profiling", "profile", "comments", "comment", "numbers", "results", "report", "summary",
    "plot", "chart", "query", "queries", "question", "hook", "hooks", "logic", "handler", "handlers", "event",
    "events", "sequence", "phase", "routine", "callback", "callbacks", "lifecycle", "signal", "signals",
    "layout", "procedure", "procedures", "approach", "steps", "step",
    # units of work in task prompts ("do not start the next slice", "start implementation now")
    "slice", "slices", "implementation", "hardening", "self-test", "selftest", "feature", "features",
    "functionality", "uploads", "interests", "messaging", "milestone", "sprint", "ticket", "tickets",
    "behavior", "behaviour", "rewrite", "condition", "passes", "assignment", "homework", "deps",
    "dependencies", "packages", "package", "lockfile",
})
"""Things that are not servers: an instruction or state about them carries no intent."""
COMPOUND_HEADS: Final = NONSERVER_NOUNS | frozenset({
    "logs", "log", "config", "configuration", "side", "output", "settings", "flags", "args", "metrics", "url",
    "code",
})
"""After a server word these make the phrase about something else ("the server tests", "api docs")."""
SERVER_RUNNERS: Final = frozenset({"task", "tasks", "job", "jobs", "session", "sessions", "pane", "window"})
"""After a server word these name what runs the server, so the phrase stays a server ("your server task",
a harness's background task; "the server's tmux session")."""
STRONG_SERVER_NOUNS: Final = frozenset({
    "server", "servers", "endpoint", "api", "service", "container", "instance", "daemon", "router", "srv",
    "webserver", "proxy", "gateway",
})
"""After a non-server word these still make a server ("the test server"); "process" does not."""

SUBJECT_PRONOUNS: Final = frozenset({
    "it", "its", "that", "this", "everything", "anything", "all", "both", "they", "them", "something",
    "whatever", "these", "those",
})
BLOCKED_SUBJECTS: Final = frozenset({
    "i", "we", "you", "u", "he", "she", "what", "who", "which", "there", "me", "whatever", "im", "i'm", "ya",
    "y'all",
})
OBJECT_PRONOUNS: Final = frozenset({"it", "them", "that", "this", "everything", "anything", "whatever",
                                    "both", "all", "those", "these", "one", "em", "'em"})

COPULAS: Final = frozenset({
    "is", "'s", "s", "are", "'re", "am", "'m", "be", "been", "being", "was", "were", "seems", "seem",
    "seemed", "looks", "look", "looked", "appears", "appear", "got", "gets", "get", "stays", "stayed",
    "remains", "remained", "became", "become", "its", "isnt", "arent", "wasnt", "it's",
})
PAST_COPULAS: Final = frozenset({"was", "were", "been", "wasnt", "had"})
REPORT_VERBS: Final = frozenset({"gives", "gave", "returns", "returned", "says", "said", "shows", "showed",
                                 "throws", "threw", "getting", "get", "got", "hit", "hitting", "with"})
HYPOTHETICAL: Final = frozenset({"should", "would", "could", "might", "may", "will", "'ll", "must", "'d",
                                 "shall", "gonna", "hopefully"})
"""Before a state word these make it an expectation, not an assertion ("it should work")."""
AUXILIARIES: Final = frozenset({
    "did", "does", "do", "will", "wo", "ca", "can", "could", "would", "has", "have", "had", "should", "must",
    "might", "may", "'ll", "'d", "'ve",
})
STATE_SKIP: Final = frozenset({
    "still", "already", "now", "finally", "fully", "all", "back", "just", "definitely", "totally", "also",
    "really", "actually", "apparently", "probably", "seemingly", "completely", "properly", "correctly",
    "clearly", "indeed", "pretty", "very", "so", "again", "yet", "even", "obviously", "literally",
    "sometimes", "constantly", "randomly", "suddenly", "always", "usually", "often", "*", "ok", "okay", "yes",
    "yep", "confirmed", "verified", "tested", "nope", "nah", "no", "yeah", "alright", "k", "and",
})
NEGATIVE_SUBJECTS: Final = frozenset({"nothing", "nobody", "none", "noone"})
"""``nothing is listening on 30000``: the state is denied."""
NEGATORS: Final = frozenset({"not", "n't", "nt", "never", "isnt", "arent", "wasnt", "doesnt", "didnt", "dont",
                             "wont", "cant", "cannot", "aint", "hardly", "longer"})
""""longer" stands for "no longer"."""

IMPERATIVE_SKIP: Final = frozenset({
    "please", "pls", "plz", "kindly", "just", "also", "now", "then", "and", "so", "ok", "okay", "k", "yes",
    "yeah", "yep", "yup", "sure", "alright", "great", "cool", "nice", "first", "next", "finally", "quickly",
    "maybe", "perhaps", "simply", "only", "go", "ahead", "let", "'s", "lets", "again", "immediately", "asap",
    "hey", "btw", "right", "fine", "thanks", "thx", "instead", "actually", "probably", "definitely", "back",
    "sudo", "systemctl", "docker", "docker-compose", "compose", "npx", "npm", "pnpm", "yarn", "service",
    "too", "safely", "gracefully", "cleanly", "properly", "forcefully", "manually", "remotely",
    "carefully", "all", "both", "or", "well", "oh", "hmm", "um", "uh", "ugh", "sorry", "good", "perfect",
    "looks", "that", "ah", "anyway", "anyways", "otherwise", "dare",
})
"""Words that may stand before an imperative verb ("ok so just restart it", "sudo systemctl restart")."""
REQUEST_MODALS: Final = frozenset({"can", "could", "would", "will", "should", "must", "'ll", "need", "needs",
                                   "have", "has", "got", "gotta", "want", "wanna", "better", "ought", "mind",
                                   "to", "try", "'d", "like", "shall"})
TO_GOVERNORS: Final = frozenset({"need", "needs", "want", "wants", "have", "has", "got", "time", "proceed",
                                 "try", "remember", "forget", "please", "ok", "okay", "like", "able", "mind",
                                 "going", "gonna", "ready", "safe", "fine", "allowed", "free"})
PLAN_GOVERNORS: Final = frozenset({"going", "gonna", "ready", "able", "trying", "tried"})
"""``I'm going to restart it``: the user's own plan, no instruction (unless "you" is the subject)."""

OBJECT_SKIP: Final = frozenset({
    "the", "a", "an", "my", "your", "our", "his", "their", "old", "new", "current", "existing", "running",
    "first", "second", "third", "last", "other", "whole", "entire", "single", "same", "main", "local",
    "remote", "prod", "production", "staging", "previous", "original", "stuck", "hung", "dead", "broken",
    "crashed", "two", "three", "four", "both", "all", "every", "each", "any", "some", "that", "this", "these",
    "those", "-m", "python", "python3", "sudo", "-9", "-f", "-d", "-p", "tp4", "tp8", "tp", "openai", "pd",
    "healthy", "working", "good", "bad", "inference", "decode", "quick", "fresh", "clean", "background",
    "detached", "own", "separate", "dedicated", "extra", "duplicate", "test",
})
"""Determiners and adjectives skipped when looking for a verb's object ("the old sglang server")."""
OBJECT_END: Final = frozenset({
    "for", "now", "please", "pls", "again", "asap", "too", "then", "and", "so", "when", "after", "before",
    "quickly", "immediately", "already", "back", "up", "down", "off", "if", "once", "until", "first",
    "instead", "later", "tonight", "today", "right", "real", "as", "because", "since", "while",
})
PREPOSITIONS: Final = frozenset({
    "with", "on", "at", "from", "in", "by", "using", "via", "under", "onto", "into", "to",
})
CONFIG_NOUNS: Final = frozenset({"flags", "flag", "args", "arguments", "config", "configuration", "settings",
                                 "options", "params", "parameters", "env", "vars", "weights", "tp", "port",
                                 "same", "new", "different", "the", "a", "fewer", "more", "less", "lower",
                                 "higher", "bigger", "smaller", "default", "defaults", "cuda", "gpu", "gpus",
                                 "nohup", "systemd", "sudo", "max", "debug", "logging", "verbose"})

DISCOURSE: Final = frozenset({
    "so", "ok", "okay", "and", "but", "hey", "btw", "also", "um", "umm", "hmm", "well", "oh", "quick",
    "question", "q", "yo", "hi", "hello", "now", "alright", "right", "sorry", "just", "then", "k",
    "great", "cool", "thanks", "ah", "anyway", "wait", "sure", "yes", "yeah", "yep",
})
"""Words that may open a sentence before its real first word."""
QUESTION_AUX: Final = frozenset({
    "is", "are", "was", "were", "am", "did", "does", "do", "has", "have", "had", "will", "would", "can",
    "could", "isnt", "isn't", "arent", "didnt", "doesnt", "hasnt", "havent", "wasnt", "shall", "might", "may",
})
WH_WORDS: Final = frozenset({"what", "what's", "whats", "which", "where", "who", "how", "how's", "hows",
                             "whose", "wheres", "where's", "when"})
CONDITIONALS: Final = frozenset({
    "if", "when", "once", "until", "till", "unless", "whenever", "after", "before", "whether", "while",
})
CLAUSE_BREAKS: Final = frozenset({",", ":", "—", "–", "-", "--", "(", ")", "but", "though", "although",
                                  "however", "because", "cause", "whereas", "otherwise", "except", "then",
                                  "so", "since", "plus"})
PLURAL_SUBJECTS: Final = frozenset({"i", "we", "you", "they", "u", "both", "all", "these", "those", "things"})
"""Subjects of the base form "work" as a verb ("they work"); after any other word "work" is a noun."""
CAUSATIVES: Final = frozenset({"make", "makes", "making", "get", "gets", "getting"})
"""Before a subject, these make a state the goal of an instruction ("make it ready", "get it running")."""
ADJECTIVE_STATES: Final = frozenset({
    "live", "online", "offline", "responsive", "unresponsive", "healthy", "unhealthy", "broken", "frozen",
    "dead", "stable", "reachable", "unreachable", "alive", "ready",
})
"""State words that are adjectives: directly before a noun they describe it ("a live demo")."""
SEEM_VERBS: Final = frozenset({"seem", "seems", "seemed", "appear", "appears", "appeared", "happens", "looks"})
"""``it seems to be hanging``: "to be" after these reports a state instead of wishing for one."""
CONNECTIVES: Final = frozenset({"or", "and", "but", "if", "then", "still", "enough", "soon", "right", "by",
                                "yet", "again", "nor", "unless", "until", "before", "not"})
"""Words after an adjective state that keep it predicative ("is it ready or still loading?")."""
PASSIVE_MODALS: Final = frozenset({"must", "should", "shall", "need", "needs", "needed", "has", "have",
                                   "ought", "gotta", "mustnt", "shouldnt"})
"""Before "be" + a participle ("must be killed", "needs to be restarted"), these ask for the action."""
PASSIVE_ADVERBS: Final = frozenset({"immediately", "properly", "also", "then", "first", "now", "just",
                                    "quickly", "safely", "all", "completely", "fully"})
PRESCRIPTIVE: Final = frozenset({"should", "shouldnt", "must", "mustnt", "shall", "ought", "needn't",
                                 "neednt"})
"""Modals that make a negated verb a rule ("it shouldn't run the containers"), not a failure report."""
WILL_WORDS: Final = frozenset({"will", "'ll", "ll", "can", "gonna", "going", "shall", "would", "'d"})
STARTS_FINE: Final = frozenset({"now", "fine", "successfully", "cleanly", "ok", "okay", "properly"})
"""With these, "it starts" / "it boots" reports a launch that works ("now it starts with no errors")."""
ERROR_WORDS: Final = frozenset({"error", "errors", "erro", "errro", "eror", "exception", "exceptions", "issue",
                                "issues", "problem", "problems", "traceback"})
RUN_WORDS: Final = frozenset({"run", "runs", "ran", "running", "start", "starting", "launch", "launching", "test",
                              "testing", "boot", "booting", "spin", "spinning", "serve", "serving"})
ATTEMPT_VERBS: Final = frozenset({"try", "tries", "tried", "trying", "attempt", "attempted", "attempting"})
CONTAINER_WORDS: Final = frozenset({"docker", "compose", "docker-compose", "container", "containers"})
ALARM_OPENERS: Final = frozenset({"hang", "wait", "whoa", "woah", "huh", "wtf", "uh", "uhh", "hold"})
"""Interjections that turn a question about the agent's action into an objection ("hang on, did you …?")."""
CORRECTION_OPENERS: Final = frozenset({"no", "nope", "nah", "wrong", "actually", "incorrect", "nono", "no,"})
NOT_CORRECTION_AFTER_NO: Final = frozenset({
    "need", "more", "worries", "worry", "problem", "problems", "idea", "way", "thanks", "rush", "pressure",
    "matter", "doubt", "clue", "change", "changes", "restart", "restarts", "longer", "reason", "one",
})
CORRECTION_MARKERS: Final = frozenset({"healthy", "working", "fine", "good", "ready", "running", "again",
                                       "already", "why", "unnecessarily", "wrong", "up", "serving"})
"""With ``you killed/restarted …`` these make the sentence a correction ("you killed the healthy one")."""

# --- server kinds ------------------------------------------------------------------------------------
KIND_ALIASES: Final[dict[str, str]] = {
    "sglang": "sglang", "sgl": "sglang", "sglang.launch_server": "sglang",
    "sglang.launch_server.py": "sglang", "sglang router": "sglang-router", "sglang-router": "sglang-router",
    "sglang_router": "sglang-router", "sgl-router": "sglang-router", "sgl_router": "sglang-router",
    "sglang_router.launch_router": "sglang-router", "vllm": "vllm", "vllm serve": "vllm",
    "vllm.entrypoints.openai.api_server": "vllm", "tgi": "tgi", "text-generation-inference": "tgi",
    "text generation inference": "tgi", "text-generation-launcher": "tgi", "llama.cpp": "llama.cpp",
    "llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "llama-server": "llama.cpp",
    "llama.cpp server": "llama.cpp", "llama_cpp.server": "llama.cpp", "llama-cpp-python": "llama.cpp",
    "ollama": "ollama", "triton server": "triton", "tritonserver": "triton",
    "triton inference server": "triton", "trtllm": "trtllm", "trt-llm": "trtllm", "tensorrt-llm": "trtllm",
    "trtllm-serve": "trtllm", "tensorrt llm": "trtllm", "uvicorn": "uvicorn", "gunicorn": "gunicorn",
    "fastapi": "fastapi", "flask": "flask", "django": "django", "runserver": "django",
    "streamlit": "streamlit", "gradio": "gradio", "http.server": "http.server",
    "simplehttpserver": "http.server", "next dev": "next", "next.js": "next", "nextjs": "next",
    "next.js dev server": "next", "next dev server": "next", "vite": "vite", "vite dev server": "vite",
    "node server": "node", "node app": "node", "nodejs": "node", "node.js": "node", "node dev server": "node",
    "npm run dev": "node", "npm start": "node", "pnpm dev": "node", "pnpm run dev": "node",
    "yarn dev": "node", "express": "node", "nodemon": "node", "dev server": "dev-server",
    "dev-server": "dev-server", "devserver": "dev-server", "docker": "docker", "docker compose": "docker",
    "docker-compose": "docker", "systemd": "systemd", "systemctl": "systemd", "nginx": "nginx",
    "redis": "redis", "redis-server": "redis", "postgres": "postgres", "postgresql": "postgres",
    "jupyter": "jupyter", "jupyter lab": "jupyter", "jupyterlab": "jupyter", "tensorboard": "tensorboard",
    "phoenix": "phoenix", "phx.server": "phoenix", "rails server": "rails", "lmdeploy": "lmdeploy",
    "mlc-llm": "mlc-llm", "litellm": "litellm", "spring boot": "spring-boot", "spring-boot": "spring-boot",
    "springboot": "spring-boot", "spring boot app": "spring-boot",
}
"""Spelling (lowercase, as spaCy tokenizes it) -> canonical server kind."""
KIND_PREFIXES: Final = frozenset({"sglang", "vllm", "tgi", "ollama", "llama", "trtllm", "triton", "uvicorn",
                                  "gunicorn", "nginx", "redis", "streamlit", "gradio", "lmdeploy"})
"""``vllm-server`` or ``sglang-k26-ddtree``: a name starting with a kind is that kind or a unit of it."""

# --- entities by regex over the text ---------------------------------------------------------------------
IDENT_TOKEN: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)+")
"""Kept as one token (spaCy would split ``sglang-k26-ddtree`` and ``llama-server`` on the hyphens)."""

HOSTPORT: Final = re.compile(
    r"(?<![\w.:-])(?P<host>\\?\*|\[::\]|(?:\d{1,3}\.){3}\d{1,3}|[A-Za-z][\w-]*(?:\.[\w-]+)*)?"
    r":(?P<port>\d{2,5})(?!\d|\.\d|:\d)"  # a sentence may end right after the port
)
PORTWORD: Final = re.compile(
    r"(?i)(?:(?<![\w-])--?[a-z-]*port|\b(?:[a-z]+_)*port)s?\b"
    r"\s*(?:=|:|\s|is\s|of\s|number\s)\s*(?P<port>\d{2,5})\b"
)
DOCKER_PUBLISH: Final = re.compile(
    r"(?<!\S)(?:-p|--publish)[\s=]+(?:(?:\d{1,3}\.){3}\d{1,3}:)?(?P<port>\d{2,5})(?::\d{2,5})?\b"
)
POSITIONAL_PORT: Final = re.compile(r"(?i)\bhttp\.server\s+(?:--?[\w-]+\s+\S+\s+)*(?P<port>\d{2,5})\b")
"""``python -m http.server 8080``: the port is a bare argument."""
BARE_PORT: Final = re.compile(
    r"(?i)\b(?:on|at|listening\s+on|serve\s+on|serving\s+on)\s+(?P<port>\d{4,5})\b"
    r"(?!\s*(?:%|gb|mb|tokens?|ms|s\b|x\b|requests|rps|tok|steps?|samples?|examples?|rows?|items?|lines?))"
)
PORT_LIST_NEXT: Final = re.compile(
    r"\s*(?:,|/|&|\band\b|\bor\b|\bnot\b|\bvs\.?)\s*:?(?P<port>\d{4,5})\b(?![.\d])"
)

IPV4: Final = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
USER_AT_HOST: Final = re.compile(r"(?<![\w.@-])[A-Za-z_][\w.-]*@(?P<host>[A-Za-z0-9][\w.-]*[A-Za-z0-9])")
LOCALHOST: Final = re.compile(r"(?i)\blocalhost\b")
MARKED_HOST: Final = re.compile(
    r"(?i)\b(?:ssh(?:\s+(?:into|to))?|on|at|to|from|into|onto)\s+(?:the\s+)?"
    r"(?P<host>[A-Za-z][\w-]*(?:\.[\w-]+)*)"
)
SUFFIXED_HOST: Final = re.compile(r"(?i)\b(?P<host>[A-Za-z][\w-]*\d[\w-]*)\s+(?:machine|box|host|node|vm)\b")
NOT_A_HOST: Final = re.compile(
    r"(?ix)^(?:"
    r"gpus?\d+[-_]\d+|[hab]\d{2,3}\w*|l40s?|rtx[\w-]*|sm_?\d+\w*|fp\d+|bf\d+|int\d+|nvfp\d|mxfp\d|w\d+a\d+"
    r"|tp\d+|dp\d+|pp\d+|ep\d+|cuda[\w.-]*|cu\d+|py(?:thon)?[\d.]*|v\d[\w.-]*|\d+[xkmbg]|x\d+|k\d+|top-?\d+"
    r"|utf-?8|https?|ipv[46]|step-?\d+|epoch-?\d+|layer-?\d+|rank-?\d+|gen\d|pcie[\w.-]*|nvlink\w*|numa\d*"
    r"|(?:qwen|llama|deepseek|gpt|mistral|mixtral|gemma|phi|kimi|glm|yi|falcon|claude|o\d|minimax|nemotron)"
    r"[\w.-]*|[\w.-]*\d+(?:\.\d+)?[bm](?:[-_][\w.-]*)?|port[\w-]*|up-to-date|[\w.-]+\.(?:py|sh|js|ts|tsx|jsx"
    r"|json|ya?ml|toml|md|txt|log|cfg|conf|ini|service|socket|timer|env|lock|csv|html|css|rs|go|c|cpp|h)"
    r")$"
)
"""Hardware, precisions, model names, versions and file names that follow "on"/"to" but are no host."""

UNIT_SUFFIX: Final = re.compile(
    r"(?<![\w.@-])(?P<unit>[\w@-][\w@.-]*\.(?:service|socket|timer|target|mount|slice|scope))\b"
)
SYSTEMCTL_UNIT: Final = re.compile(
    r"\bsystemctl\s+(?:--?[\w-]+\s+)*(?:start|stop|restart|reload|status|enable|disable|kill|is-active"
    r"|try-restart|reload-or-restart)\s+(?:--?[\w-]+\s+)*(?P<unit>[A-Za-z][\w@.-]*)"
)
DOCKER_CONTAINER: Final = re.compile(
    r"\bdocker\s+(?:container\s+)?(?:restart|stop|start|kill|rm|logs)\s+(?:-[\w-]+\s+)*"
    r"(?P<unit>[A-Za-z][\w.-]*)"
)
KIND_PREFIXED_UNIT: Final = re.compile(
    r"(?i)(?<![\w.-])(?P<unit>(?P<kind>" + "|".join(sorted(KIND_PREFIXES)) + r")[-_](?:[\w.-]*\d[\w.-]*"
    r"|[a-z0-9]+[-_][\w.-]+))(?![\w-])"
)

ENTITY_GATES: Final[dict[re.Pattern[str], tuple[str, ...]]] = {
    UNIT_SUFFIX: (".service", ".socket", ".timer", ".target", ".mount", ".slice", ".scope"),
    SYSTEMCTL_UNIT: ("systemctl",),
    DOCKER_CONTAINER: ("docker",),
    KIND_PREFIXED_UNIT: tuple(f"{k}{sep}" for k in sorted(KIND_PREFIXES) for sep in "-_"),
    HOSTPORT: (":",),
    PORTWORD: ("port",),
    DOCKER_PUBLISH: ("-p", "--publish"),
    POSITIONAL_PORT: ("http.server",),
    BARE_PORT: ("on ", "at "),
    USER_AT_HOST: ("@",),
    IPV4: (".",),
    LOCALHOST: ("localhost",),
    MARKED_HOST: ("on ", "at ", "to ", "from ", "into ", "onto ", "ssh "),
    SUFFIXED_HOST: ("machine", "box", "host", "node", "vm"),
}
"""Lowercase strings one of which must occur for a regex to be worth running (most messages have no ports)."""

# --- pastes ---------------------------------------------------------------------------------------------
HARNESS_BLOCK: Final = re.compile(
    r"<(?P<tag>[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)(?:\s[^>]*)?>.*?</(?P=tag)\s*>", re.S
)
HARNESS_LINE: Final = re.compile(
    r"\[Request interrupted by user[^\]\n]*\]|^Caveat: The messages below were generated by the user[^\n]*"
    r"|\AThis session is being continued from a previous conversation[\s\S]*",
    re.M,
)
"""Harness text in a user record: interruptions, caveats, and Claude Code's compaction summary (the
agent's own account of the earlier conversation, not the user's words)."""
LOG_LINE: Final = re.compile(
    r"""^\s*(?:
       [\[(]?\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{1,2}:\d{2}
     | [\[(]?\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}
     | \d{2}:\d{2}:\d{2}(?:[.,]\d+)?\s
     | (?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE|NOTICE)(?:\s+\d|\s*[:\]|])
     | \[(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|I|W|E)\b[^\]]*\]
     | [IWEF]\d{4}\s\d{2}:\d{2}
     | Traceback\ \(most\ recent\ call\ last\)
     | File\ "[^"]+",\ line\ \d+
     | [\w.]*(?:Error|Exception|Warning|Interrupt)(?::|$)
     | \$\ \S | >>>\s
     | [\w.-]+@[\w.-]+:[~/]
     | \(\w[\w.-]*\)\s+\S*[$#]
     | at\ [\w.$<>]+\s*\(
     | [│├└┌┐┘╭╮╰╯║╔╗╚╝═]
     | \+[-=+]{3,}
     | \|.*\|\s*$
     | [{}\[\]]\s*,?\s*$
     | "[\w-]+"\s*:
     | [\d\s.,:%/|()-]+$
     | \[rank\d+\]
    )""",
    re.X,
)
"""A line that is machine output: timestamps, log levels, tracebacks, prompts, tables, JSON."""
CODE_LINE: Final = re.compile(
    r"""^(?:
       (?:\ {4,}|\t)(?![-*+]\s|\d+[.)]\s)\S
     | \s*(?:def|class|import|return|async\ def|elif|except|try:|with\ \S+\ as|@\w+|\#!)(?:\s|$|:|\()
     | \s*from\ \S+\ import\s
     | \s*if\ __name__
     | \s*(?:const|let|var|function|export|interface|type)\s+\w
     | \s*[\w.]+\s*=\s*[\w.\[{("']
     | .*[;{}]\s*$
     | .*\):\s*$
     | \s*//
     | \s*<[/!]?[A-Za-z][^>]*>\s*$
    )""",
    re.X,
)
SERVER_LOG_SIGNATURE: Final = re.compile(
    r"Application startup complete|Uvicorn running on|fired up and ready to roll|Serving HTTP on"
    r"|Started server process|Waiting for application|Press CTRL\+C to quit|Running on https?://"
    r"|Listening (?:at|on):? +https?://|Booting worker|\bReady in \d|ready in \d+(?:\.\d+)?\s*m?s\b"
    r"|Local:\s+https?://|Network:\s+https?://|HTTP/1\.[01]\"? \d{3}|Serving Flask app"
    r"|Debugger (?:is active|PIN)|Avg prompt throughput|▲ Next\.js|VITE v\d|Started .*\.service"
    r"|Starting .*\.service|Loaded: (?:loaded|not)"
    r"|Active: (?:active|inactive|failed|activating)|Main PID:|Ready to accept connections|Press Ctrl\+C"
    r"|compiled successfully|webpack compiled|Watching for file changes|Uvicorn running|GET /\S* HTTP"
)
"""Lines a server prints when it is up: quoted by the user, they are the server's words, not theirs."""
INLINE_LOG_TAIL: Final = re.compile(
    r"(?<=\s)(?:(?:INFO|WARNING|ERROR|DEBUG|CRITICAL|FATAL):|\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}"
    r"|Traceback \(most recent)"
)
STRUCTURE_LINE: Final = re.compile(
    r"\s{0,3}#{1,6}\s+\S|\s*(?:[-*\u2022]|\d{1,2}[.)])\s+\S|\s*\|.*\|\s*$|\s*\*\*[^*\n]{1,80}\*\*")
"""A line of a structured document: a markdown heading, list item, table row or bold label."""
TITLE_SMALL_WORDS: Final = frozenset({"of", "the", "and", "to", "for", "a", "an", "in", "on", "at", "or", "with",
                                      "by", "&", "/", "-", "\u2014", "vs"})
"""Words a Title Case heading leaves lowercase ("Goal of This Phase", "Stop Condition / Hand-off Rule")."""
QUOTED: Final = re.compile(r"\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”")


# --- word classes of the reader's context checks ---------------------------------------------------------
BIND_ALL: Final = frozenset({"*", "\\*", "[::]", "0.0.0.0"})
"""Bind-all addresses in ``host:port``: no host."""
NOT_HOSTS: Final = frozenset({"http", "https", "tcp", "udp", "ws", "wss", "grpc", "redis", "postgres"})
"""Schemes that look like the host part of ``host:port``."""
CANNOT_REACH: Final = ("connect", "refused", "reach", "unreachable", "timeout", "timed", "502", "503", "504")
"""Words of a failure to reach something: "it" after them means the server that did not answer."""
DETERMINERS: Final = frozenset({"the", "a", "an", "my", "this", "that", "these", "those", "your", "our"})
"""Determiners: "the crash" is a noun, "the server tests" a compound."""
READY_FOR_OK: Final = frozenset({
    "use", "requests", "traffic", "inference", "serving", "go", "roll", "accept", "serve", "connections",
    "benchmarking", "benchmark", "testing", "queries",
})
"""``it's ready for traffic``: what a server can be ready for (not "ready for review")."""
QUESTION_SUBJECTS: Final = frozenset({"you", "u", "we", "they", "i", "it", "the", "this", "that", "these",
                                       "those", "anything", "everything", "sglang", "vllm", "ollama", "tgi"})
"""Words after a question opener that make it a question ("do you…"); others make it an imperative."""
BEFORE_IMPERATIVE: Final = IMPERATIVE_SKIP | AUXILIARIES | REQUEST_MODALS | {"do", "does"}
"""Words that may stand before an imperative verb ("please", "can you", "do")."""
KILLED_LEMMAS: Final = frozenset({"kill", "stop", "terminate", "shut", "take", "halt", "pkill"})
"""``it got killed``, ``the server stopped``: said of a server, these mean it is down."""
NEW_SUBJECTS: Final = frozenset({"it", "its", "i", "we", "you", "they", "the"})
"""After "and", these start a new clause ("… and it responds fine")."""
BARE_FOLLOWERS: Final = frozenset({
    "and", "now", "yet", "again", "on", "at", "with", "fine", "already", "too", "finally", "though", "there",
    "here", "ok", "okay", "thanks", "btw", "but", "so", "as", "after", "since", "for", "lol", "to", "from",
    "in", "of", "when", "while", "because", "anymore", "either",
})
"""Words that may follow a subject-less state word ("up now", "down again", "refused from the api")."""
