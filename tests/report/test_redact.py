from __future__ import annotations

import pytest

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
