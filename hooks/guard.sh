#!/bin/sh
# The Claude Code plugin's hook command (hooks/hooks.json): the same fast hook `analyzer guard install`
# writes, `PYTHON -I -S <plugin>/analyzer/guard/client.py --agent claude-code`, where PYTHON is the
# interpreter session-analyzer is installed in: $ANALYZER_PYTHON, else the one the `analyzer` console
# script on PATH runs (its #! line; read here, not by running it: click's start-up is what this avoids).
# The client is the plugin's own copy; the warm server it starts runs the plugin's package with that
# interpreter's dependencies. POSIX sh and builtins only (one fork, for `command -v`): this runs
# before every shell command the agent proposes.
# No interpreter found: the command is allowed (exit 1: Claude Code's non-blocking error, which shows
# the reason to the user instead of blocking the agent).

case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
root=${CLAUDE_PLUGIN_ROOT:-$here/..}
py=${ANALYZER_PYTHON:-}
split=
if [ -z "$py" ]; then
    script=$(command -v analyzer) || script=
    if [ -n "$script" ] && [ -f "$script" ] && { IFS= read -r first; IFS= read -r second || :; } < "$script"; then
        case $first in
            '#!/bin/sh'*)  # pip's form for an interpreter path with a space or too long for #!
                py=${second#*\"}; py=${py%%\"*} ;;
            '#!'*)  # an interpreter and maybe its argument (/usr/bin/env python3); no space in its path
                py=${first#\#!}; split=1 ;;
        esac
    fi
fi
if [ -z "$py" ]; then
    echo "session-analyzer guard: no analyzer on PATH (pip install session-analyzer, or set ANALYZER_PYTHON); the command was not judged" >&2
    exit 1
fi
if [ ! -f "$root/analyzer/guard/client.py" ]; then  # python would exit 2, which blocks
    echo "session-analyzer guard: no analyzer/guard/client.py under the plugin root $root; the command was not judged" >&2
    exit 1
fi
if [ -n "$split" ]; then
    case ${py##*/} in
        python*|pypy*|'env python'*|'env pypy'*) ;;
        *)  # a version manager's shim (pyenv, asdf): it finds the interpreter; at the console script's cost
            exec "$script" guard "$@" ;;
    esac
    exec $py -I -S "$root/analyzer/guard/client.py" "$@"
fi
exec "$py" -I -S "$root/analyzer/guard/client.py" "$@"
