from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import click
import orjson

from analyzer.cli._common import fail, use_colour, width
from analyzer.config import ConfigError, load_config
from analyzer.report import text
from analyzer.rules.cases import read_cases
from analyzer.rules.engine import did_you_mean
from analyzer.rules.loader import LoadedRule, RuleSet, builtin_rules_dir, load_rules
from analyzer.rules.testing import check_rule_cases


def _ruleset(rules_dir: tuple[str, ...]) -> RuleSet:
    try:
        config = load_config()
    except ConfigError as exc:
        fail(str(exc))
    ruleset = load_rules([*config.rules_dir, *rules_dir])
    for w in ruleset.warnings:
        click.echo(f"warning: {w}", err=True)
    return ruleset


_rules_dir_option = click.option("--rules-dir", multiple=True, type=click.Path(file_okay=False),
                                 help="Extra folder of rules (besides config and the built-in pack).")


@click.group("rules")
def command() -> None:
    """List, explain, test and scaffold rules."""


@command.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_rules_dir_option
def list_rules(fmt: str, rules_dir: tuple[str, ...]) -> None:
    """List every rule with its severity, status (stable, preview…), groups and summary; rules
    from outside the built-in pack say where they come from."""
    ruleset = _ruleset(rules_dir)
    rows: list[dict[str, Any]] = [{"name": n, "severity": str(lr.cls.severity), "status": str(lr.cls.status),
             "groups": list(lr.cls.groups), "summary": lr.cls.summary, "origin": lr.origin, "file": lr.file}
            for n, lr in sorted(ruleset.rules.items())]
    if fmt == "json":
        click.echo(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
        return
    colour = use_colour(sys.stdout)
    pads = {k: max((len(_cell(r, k)) for r in rows), default=0) for k in ("name", "severity", "status", "groups")}
    for r in rows:
        cells = {k: _cell(r, k).ljust(pad) for k, pad in pads.items()}
        plain = "  ".join(cells.values()) + "  "
        if colour:  # styled after padding: escape codes take no column
            cells["name"] = text.styled_rule(cells["name"])
            cells["severity"] = text.styled_severity(r["severity"]) + cells["severity"][len(r["severity"]):]
        tail = r["summary"] + ("" if r["origin"] == "builtin" else f"  [{r['origin']}]")
        click.echo("  ".join(cells.values()) + "  "
                   + textwrap.shorten(tail, max(20, width() - len(plain)), placeholder="…"), color=colour)


def _cell(row: dict[str, Any], key: str) -> str:
    return ",".join(row[key]) or "-" if key == "groups" else str(row[key])


@command.command("explain")
@click.argument("name")
@_rules_dir_option
def explain(name: str, rules_dir: tuple[str, ...]) -> None:
    """Show a rule's documentation, options, examples and how to suppress it."""
    ruleset = _ruleset(rules_dir)
    lr = ruleset.rules.get(name)
    if lr is None:
        fail(f"unknown rule {name!r}{did_you_mean(name, sorted(ruleset.rules))}; see `analyzer rules list`")
    cls = lr.cls
    out = [f"{cls.name}  ({cls.severity} severity, {cls.status}; groups: {', '.join(cls.groups) or '-'})",
           "", cls.summary]
    for title, body in cls.doc_sections().items():
        if title and body:
            out += ["", f"{title}:", textwrap.indent(body, "  ")]
    opts = cls.Options.model_fields
    if opts:
        out += ["", "Options (config [tool.analyzer.options." + cls.name + "]):"]
        for oname, info in opts.items():
            default = orjson.dumps(info.get_default(call_default_factory=True), default=str).decode()
            out.append(f"  {oname} = {default}  {info.description or ''}".rstrip())  # as TOML reads it
    examples = _examples(lr)
    if examples:
        out += ["", "Examples (from the rule's cases):"]
        out += examples
    out += ["", "Suppress:",
            f"  one tool call:  append `# analyzer: ignore[{cls.name}] <reason>` to the command",
            f"  everywhere:     [tool.analyzer] ignore = [\"{cls.name}\"]  (or --ignore {cls.name})",
            "  accepted ones:  analyzer check --write-baseline baseline.json, then --baseline baseline.json",
            "", f"Defined in {lr.file}"]
    click.echo("\n".join(out))


def _examples(lr: LoadedRule) -> list[str]:
    if not lr.cases_file.is_file():
        return []
    try:
        _, cases = read_cases(lr.cases_file)
    except Exception:
        return []
    out: list[str] = []
    for case in cases:
        if not case.example:
            continue
        out.append(f"  # {case.name}")
        for ev in case.session.events:
            text = getattr(ev, "command", None) or getattr(ev, "text", "")
            mark = ""
            if lr.cls.name in ev.marks.expect:
                mark = f"   <-- {lr.cls.name}"
            elif lr.cls.name in ev.marks.ok:
                mark = "   (quiet)"
            who = "$" if ev.kind == "tool" else f"{ev.kind}:"
            out.append(f"  {who} {' '.join(str(text).split())[:100]}{mark}")
    return out


@command.command("test")
@click.argument("names", nargs=-1)
@_rules_dir_option
def test(names: tuple[str, ...], rules_dir: tuple[str, ...]) -> None:
    """Run rules against their cases files (<name>.cases.yaml beside each rule). Prints TP/FP/FN
    per rule and every failure with its case file and line; never stops at the first.

    NAMES default to every rule of the --rules-dir folders when given, else every rule."""
    ruleset = _ruleset(rules_dir)
    mine = {Path(d).resolve() for d in rules_dir}
    selected = list(names) or sorted(n for n, lr in ruleset.rules.items()
                                     if not mine or Path(lr.file).resolve().parent in mine)
    if not selected:
        fail(f"no rule found in {', '.join(rules_dir)}")
    unknown = [n for n in selected if n not in ruleset.rules]
    if unknown:
        fail(f"unknown rule {unknown[0]!r}{did_you_mean(unknown[0], sorted(ruleset.rules))}")
    passed = failed = 0
    for name in selected:
        report = check_rule_cases(ruleset.rules[name])
        status = "PASS" if report.passed else "FAIL"
        click.echo(f"{status} {name}: {report.cases} case(s), TP {report.tp}, FP {report.fp}, FN {report.fn}")
        for f in report.failures:
            click.echo(f"  {f}")
        for t in report.todo:
            click.echo(f"  todo: {t}")
        if report.passed:
            passed += 1
        else:
            failed += 1
    click.echo(f"{passed} passed, {failed} failed")
    if failed:
        sys.exit(1)


_TEMPLATE = '''"""{title}"""

from __future__ import annotations

from collections.abc import Iterable

from analyzer.lifecycle import Kill, World
from analyzer.rules import Finding, Rule, Severity


class {cls}(Rule):
    """Flags {title_lower}.

    What it does:
        Describe the situation this rule finds, in terms of the session's events.

    Why is this bad:
        Say what it costs the user when it happens.

    Known false positives:
        Say when it fires although nothing went wrong.
    """

    name = "{name}"
    severity = Severity.medium
    groups = ("custom",)
    summary = "{title}"

    def check(self, world: World) -> Iterable[Finding]:
        # Example: every kill of a generic name. Replace with your own query over the world.
        for kill in world.facts_of(Kill):
            if kill.generic:
                yield self.finding(world, anchor=kill.event, message=f"{{kill.text}} kills by a generic name")
'''

_CASES = """rule: {name}
cases:
  - name: fires on a generic kill
    example: true
    events:
      - user: clean up
      - bash: pkill node
        expect: {name}
  - name: quiet on a targeted kill
    events:
      - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
      - bash: pkill -f "uvicorn app:api"
        ok: {name}
"""


_NEW_RULES_DIR = "analyzer_rules"


@command.command("new")
@click.argument("name")
@click.option("--dir", "folder", type=click.Path(file_okay=False), default=None,
              help=f"Folder to write the rule and its cases into [default: the config's first rules_dir, "
                   f"else ./{_NEW_RULES_DIR}].")
def new(name: str, folder: str | None) -> None:
    """Scaffold a rule NAME (kebab-case) and a cases file whose cases pass. Without --dir it never
    writes into the built-in rule pack."""
    if not re.match(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$", name):
        fail(f"rule name {name!r} must be kebab-case, like 'restart-without-probe'")
    d = Path(folder) if folder is not None else _default_rules_dir()
    d.mkdir(parents=True, exist_ok=True)
    module = d / f"{name.replace('-', '_')}.py"
    cases = d / f"{name}.cases.yaml"
    for p in (module, cases):
        if p.exists():
            fail(f"{p} already exists")
    title = name.replace("-", " ").capitalize()
    cls = "".join(w.capitalize() for w in name.split("-"))
    module.write_text(_TEMPLATE.format(name=name, cls=cls, title=title, title_lower=title.lower()), "utf-8")
    cases.write_text(_CASES.format(name=name), "utf-8")
    click.echo(f"wrote {module} and {cases}\nrun: analyzer rules test {name} --rules-dir {d}")


def _default_rules_dir() -> Path:
    """The config's first ``rules_dir`` (the team's pack), else ``./analyzer_rules``; never the
    built-in pack, which a config inside this project's checkout could name."""
    try:
        config = load_config()
    except ConfigError as exc:
        fail(str(exc))
    builtin = builtin_rules_dir().resolve()
    for configured in config.rules_dir:
        if Path(configured).resolve() != builtin:
            return Path(configured)
    return Path(_NEW_RULES_DIR)
