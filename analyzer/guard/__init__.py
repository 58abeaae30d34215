"""The live guard: judge a shell command before it runs, from the session's world.

``analyzer guard --agent NAME`` is the hook command (``client``: light, fails open); the warm
per-user server (``server``) keeps one world per session (``judge``, ``tail``); ``agents`` is the
registry of protocol modules (``claude_code``, ``codex``, ``gemini``, ``cursor``); ``install``
merges the hook entries into an agent's config. Nothing is imported here: the client must start fast.
"""
