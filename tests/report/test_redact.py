from __future__ import annotations

import re
from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.report import redact
from analyzer.report.redact import MASK, Redactor

SECRETS = [
    ("export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-ant-api03", "Anthropic API key"),
    ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456", "sk-proj-abcdef", "OpenAI API key"),
    ("git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y", "ghp_abcdef", "GitHub token"),
    ("aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS access key"),
    ("huggingface-cli login --token hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghij", "Hugging Face token"),
    ("curl -H 'Authorization: Bearer abc.def.ghi123456' localhost:8000", "abc.def.ghi123456", "Authorization header"),
    ("psql postgres://admin:hunter2secret@db:5432/app", "hunter2secret", "password in URL"),
    ("export HF_TOKEN=myverysecretvalue", "myverysecretvalue", "secret variable"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAA", "private key"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS)
def test_secrets_are_redacted_and_counted(text: str, secret: str, kind: str) -> None:
    r = Redactor()
    out = r(text)
    assert secret not in out and MASK in out
    assert kind in dict(r.kinds())


@pytest.mark.parametrize(("text", "secret"), [
    ("export Hf_ToKeN=myverysecretvalue", "myverysecretvalue"),
    ("AUTHORIZATION: token abcdef123456", "abcdef123456"),
    ("export DB_PASSWD = 'hunter2hunter2'", "hunter2hunter2"),
    ("export API_\u212aEY=kelvinsignkey", "kelvinsignkey"),  # (?i) matches the Kelvin sign as k
    ("r\u00e9sum\u00e9: export MY_SECRET=abcd1234", "abcd1234"),
])
def test_case_blind_kinds_are_found_in_any_case_and_in_non_ascii_text(text: str, secret: str) -> None:
    out = Redactor()(text)
    assert secret not in out and MASK in out


def _without_gates(text: str) -> str:
    """What the redactor gives when every pattern runs on every text."""
    for _kind, pattern, group in redact._RULES:
        text = pattern.sub(MASK if group == 0 else partial(redact._replace_group, group=group), text)
    return text


_NAMES = st.sampled_from(["API_KEY", "my_api_key", "Db_Key", "GH_TOKEN", "token", "CLIENT_SECRET", "passwd",
                          "PassWord", "KEY_COUNT", "API_\u212aEY", "\u017fECRET", "HOME"])
_NOISE = st.sampled_from(["", " ", "\n", "export ", "authorization", "Authorization: ", "bearer ", "https://",
                          "user:pw@host", "sk-", "sk-ant-", "ghp_", "AKIA", "hf_", "AIza", "xoxb-", "sk_live_",
                          "eyJ", "--token ", "--api-key=", "-----BEGIN RSA PRIVATE KEY-----", "r\u00e9sum\u00e9"])
_ASSIGNMENT = st.tuples(_NOISE, _NAMES, st.sampled_from(["=", " = ", ": "]), st.sampled_from(["", "'", '"']),
                        st.text("abcdefghijklmnopqrstuvwxyzABCDEF0123456789_-", min_size=0, max_size=40),
                        _NOISE).map("".join)


@given(st.lists(_ASSIGNMENT, min_size=1, max_size=4).map(" ".join))
def test_gates_never_change_what_is_redacted(text: str) -> None:
    assert Redactor()(text) == _without_gates(text)


def test_every_kind_has_a_gate() -> None:
    assert {kind for kind, _, _ in redact._RULES} == set(redact._GATES)
    assert all(isinstance(p, re.Pattern) for _, p, _ in redact._RULES)


def test_ordinary_commands_are_untouched() -> None:
    r = Redactor()
    for text in ["pkill -9 -f \"launch_server.*3000[01]\"", "curl -sf localhost:30000/health",
                 "export CUDA_HOME=/usr/local/cuda-13.0", "export KEY_COUNT=3 && ls"]:
        assert r(text) == text
    assert not r.found


def test_disabled_redactor_passes_text_through() -> None:
    r = Redactor(enabled=False)
    assert r("export HF_TOKEN=myverysecretvalue") == "export HF_TOKEN=myverysecretvalue"


def test_check_output_redacts_what_it_quotes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from analyzer.cli import main

    p = tmp_path / "s.session.yaml"
    p.write_text(
        "events:\n"
        "  - bash: 'export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 &&"
        " nohup uvicorn app:api --port 8000 > api.log 2>&1 &'\n"
        "  - user: Ready\n"
        "  - bash: pkill -f 'uvicorn app:api'\n"
    )
    for fmt in ("text", "json", "sarif"):
        result = CliRunner().invoke(main, ["check", str(p), "--format", fmt])
        assert result.exit_code == 1, result.output
        assert "kill-after-ready" in result.output
        assert "sk-ant-api03-AbCdEf" not in result.output
