"""Which platform a host runs, what a verdict says it assumed, and BSD pkill sparing its ancestors."""

from __future__ import annotations

import pytest

from analyzer.shell.kill import Process, evaluate
from analyzer.shell.parse import parse
from analyzer.shell.platform import infer_platform, is_bsd_like, normalize_platform
from tests.shell.kill.helpers import labels, run


def test_macos_pkill_spares_ancestors_unless_a() -> None:
    (v,) = run("bash -c 'pkill -f zq_srv; echo after'", [Process(argv=("zq_srv",), label="t")], platform="macos")
    assert labels(v) == ["t"] and v.self_kill is None and v.platform == "macos"
    assert any("BSD pkill excludes its ancestors" in n for n in v.notes)
    (a,) = run("bash -c 'pkill -a -f zq_srv; echo after'", [], platform="macos")
    assert a.self_kill is not None


def test_macos_kill_pgrep_does_not_list_the_calling_shell() -> None:
    (v,) = run("bash -c 'kill $(pgrep -f zq_srv)'", [Process(argv=("zq_srv",), label="t")], platform="macos")
    assert labels(v) == ["t"] and v.self_kill is None


@pytest.mark.parametrize(
    ("texts", "platform", "evidence"),
    [
        (["Darwin mbp.local 23.4.0 Darwin Kernel Version 23.4.0"], "macos", "uname says Darwin"),
        (["Linux gpu-node-3 5.15.0-105-generic #115-Ubuntu SMP x86_64 GNU/Linux"], "linux", "uname says Linux"),
        (["cd /Users/alice/project && npm run dev"], "macos", "/Users/ home directory"),
        (["brew install redis"], "macos", "Homebrew"),
        (["launchctl kickstart -k gui/501/com.example.api"], "macos", "launchctl"),
        (["sudo apt-get install -y nginx"], "linux", "a Linux package manager"),
        (["systemctl restart sglang"], "linux", "systemd"),
        (["ls /home/bob/models"], "linux", "/home/ or /root/ paths"),
    ],
)
def test_infer_platform_from_evidence(texts: list[str], platform: str, evidence: str) -> None:
    got, why = infer_platform(texts)
    assert got == platform
    assert why.startswith(evidence)


def test_stronger_evidence_wins_over_paths() -> None:
    # a /home path mentioned on a Mac, but uname says Darwin
    assert infer_platform(["scp gpu:/home/bob/x .", "Darwin"])[0] == "macos"
    assert infer_platform(["ls /Users/alice", "Linux box 6.1.0-18-amd64 #1 SMP"])[0] == "linux"


def test_defaults_say_they_are_assumptions() -> None:
    assert infer_platform([]) == ("linux", "no evidence (assumed Linux)")
    assert infer_platform(["echo hello"], ssh_target=True) == ("linux", "ssh target (assumed Linux)")


def test_normalize_and_bsd() -> None:
    assert normalize_platform("Darwin") == "macos"
    assert normalize_platform(None) == "linux"
    assert is_bsd_like("macos") and is_bsd_like("freebsd") and not is_bsd_like("linux")


def test_verdicts_name_the_platform_they_assumed() -> None:
    procs = [Process(argv=("zq_srv",), label="t", host="gpu1"), Process(argv=("zq_srv",), label="local")]
    (local,) = evaluate(parse("pkill -f zq_srv"), procs, platform="macos")
    assert local.platform == "macos" and any("assumed macOS" in n for n in local.notes)
    (remote,) = evaluate(parse("ssh gpu1 'pkill -f zq_srv'"), procs, platform="macos")
    assert remote.platform == "linux" and any("gpu1: ssh target (assumed Linux)" in n for n in remote.notes)
    (mapped,) = evaluate(parse("ssh gpu1 'pkill -f zq_srv; true'"), procs, platforms={"gpu1": "Darwin"})
    assert mapped.platform == "macos" and mapped.self_kill is None  # BSD pkill spares the remote shell


def test_bsd_killall_has_no_r_and_fuser_no_ports() -> None:
    py3 = Process(argv=("python3", "x.py"), label="py3", ports=(8000,))
    (k,) = evaluate(parse("killall -m 'python3?'"), [py3], platform="macos")
    assert [v.process.label for v in k.victims] == ["py3"]
    (f,) = evaluate(parse("fuser -k 8000/tcp"), [py3], platform="macos")
    assert f.victims == [] and any("takes only files" in n for n in f.notes)
