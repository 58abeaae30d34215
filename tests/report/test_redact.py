from __future__ import annotations

import re
import sys
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
        text = pattern.compiled.sub(MASK if group == 0 else partial(redact._replace_group, group=group, kind=_kind),
                                    text)
    return text


_NAMES = st.sampled_from(["API_KEY", "my_api_key", "Db_Key", "GH_TOKEN", "token", "CLIENT_SECRET", "passwd",
                          "PassWord", "KEY_COUNT", "API_\u212aEY", "\u017fECRET", "HOME"])
_NOISE = st.sampled_from(["", " ", "\n", "export ", "authorization", "Authorization: ", "bearer ", "https://",
                          "user:pw@host", "sk-", "sk-ant-", "ghp_", "AKIA", "hf_", "AIza", "xoxb-", "sk_live_",
                          "eyJ", "--token ", "--api-key=", "-----BEGIN RSA PRIVATE KEY-----", "r\u00e9sum\u00e9",
                          "Author\u0131zation: ", "AUTHOR\u0130ZATION= ", "x-ap\u0131-key: ", "Account\u212aey="])
_ASSIGNMENT = st.tuples(_NOISE, _NAMES, st.sampled_from(["=", " = ", ": "]), st.sampled_from(["", "'", '"']),
                        st.text("abcdefghijklmnopqrstuvwxyzABCDEF0123456789_-", min_size=0, max_size=40),
                        _NOISE).map("".join)


@given(st.lists(_ASSIGNMENT, min_size=1, max_size=4).map(" ".join))
def test_gates_never_change_what_is_redacted(text: str) -> None:
    assert Redactor()(text) == _without_gates(text)


def test_the_fold_table_is_every_non_ascii_letter_ignorecase_matches() -> None:
    # the case-blind gates search the lower-cased text with these folded: one missing would hide
    # a match from its gate, and the secret would show
    letter = re.compile("(?i)[a-z]")
    found = {c: next(a for a in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(f"(?i){a}", chr(c)))
             for c in range(0x80, sys.maxunicode + 1) if letter.fullmatch(chr(c))}
    assert found == redact._FOLD_TO_ASCII


@pytest.mark.parametrize("text", ["export API_\u212aEY=kelvinsignkey1", "client_\u017fecret: longsvalue1",
                                  "author\u0131zation: bearer dotlessvalue1", "x-ap\u0131-key: dotlessvalue2"])
def test_case_blind_kinds_are_found_through_the_folded_letters(text: str) -> None:
    assert Redactor()(text) == _without_gates(text) != text


def test_every_kind_has_a_gate() -> None:
    assert {kind for kind, _, _ in redact._RULES} == set(redact._GATES)
    assert all(isinstance(p.compiled, re.Pattern) for _, p, _ in redact._RULES)  # each compiles


def test_each_gate_literal_is_searched_for_behind_a_character_it_holds() -> None:
    # a literal grouped under a character it lacks, or in a cluster whose one search cannot find
    # it, would never be searched for: its kind's secrets would show in every text without it
    grouped = []
    for rarest, lower, search, members in redact._literals():
        for lit, _ in members:
            assert rarest in lit
            assert search is None or search(f"..{lit}..") is not None
            grouped.append((lit, lower))
    assert sorted(grouped) == sorted({(lit, gate.lower) for gate in redact._GATES.values() for lit in gate.any_of})


def _candidates_one_by_one(text: str) -> set[str]:
    """The kinds a gate opens, each literal searched for on its own (what the clusters stand for)."""
    lowered = redact._folded(text).lower()
    return {kind for kind, gate in redact._GATES.items()
            if any(lit in (lowered if gate.lower else text) for lit in gate.any_of)}


_LITERAL_BITS = sorted({piece for gate in redact._GATES.values() for lit in gate.any_of
                        for piece in (lit, lit[:2], lit[1:], lit.upper(), lit.lower())})


@given(st.lists(st.one_of(st.sampled_from(_LITERAL_BITS), st.text(max_size=6)), max_size=12).map("".join))
def test_the_clusters_open_exactly_the_kinds_each_literal_would(text: str) -> None:
    assert redact._candidates(text) == _candidates_one_by_one(text)


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


# -- recall against 43 planted kinds, and the look-alikes that are evidence (issue 17) ------------
# (what, text, the secret that must vanish). Token formats after gitleaks' rules; the context
# kinds (flags, headers, JSON keys, URLs) as agents write them.
PLANTED = [
    ("Anthropic key", "export ANTHROPIC_API_KEY_X sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("OpenAI project key", "client = OpenAI(api_key='sk-proj-abcdefghijklmnopqrstuvwxyz123456')", "sk-proj-abcdefghijklmnopqrstuvwxyz123456"),
    ("OpenAI legacy key", "openai.key sk-" + "Ab1" * 16, "sk-" + "Ab1" * 16),
    ("GitHub classic token", "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("GitHub fine-grained token", "gh auth login github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123"),
    ("GitHub OAuth token", "echo gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("GitLab PAT", "git remote set-url origin https://gitlab.com glpat-xYz12AbC34dEf56GhI78jK", "glpat-xYz12AbC34dEf56GhI78jK"),
    ("AWS access key id", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS secret JSON", '{"AccessKeyId": "ASIAXXX", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("AWS secret ini", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("Azure storage key", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "Zm9vYmFy" * 11 + "==;EndpointSuffix=core.windows.net", "Zm9vYmFy" * 11),
    ("GCP private_key_id", '{"type": "service_account", "private_key_id": "' + "a1b2c3d4e5" * 4 + '"}', "a1b2c3d4e5" * 4),
    ("Hugging Face token", "huggingface-cli login --token hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
    ("Google API key", "curl 'https://maps.googleapis.com/x?key=AIzaSyA1234567890abcdefghijklmnopqrstuv'", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("Slack bot token", "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("Slack webhook", "curl -X POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("Stripe secret key", "stripe.api = sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("Stripe restricted key", "use rk_live_51H8abcdefghijklmnopqrstu", "rk_live_51H8abcdefghijklmnopqrstu"),
    ("SendGrid key", "sg = SendGridAPIClient('SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq')", "SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"),
    ("npm token", "//registry.npmjs.org/:_authToken npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("PyPI token", "twine upload -u __token__ pypi-AgEIcHlwaS5vcmc" + "Ab9_" * 14, "pypi-AgEIcHlwaS5vcmc" + "Ab9_" * 14),
    ("DigitalOcean token", "doctl auth init -t dop_v1_" + "ab12" * 16, "dop_v1_" + "ab12" * 16),
    ("Shopify token", "X shpat_" + "a1b2" * 8, "shpat_" + "a1b2" * 8),
    ("Databricks token", "databricks configure dapi" + "0123456789abcdef" * 2, "dapi" + "0123456789abcdef" * 2),
    ("Twilio API key", "twilio api:core SK" + "0123456789abcdef" * 2, "SK" + "0123456789abcdef" * 2),
    ("JWT", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("Authorization Bearer", "curl -H 'Authorization: Bearer abc.def.ghi123456' localhost:8000", "abc.def.ghi123456"),
    ("Authorization Basic", "curl -H \"authorization: Basic dXNlcjpwYXNzd29yZA==\" api", "dXNlcjpwYXNzd29yZA=="),
    ("X-API-Key header", "curl -H 'X-API-Key: 9f8e7d6c5b4a39281706' https://api.example.com", "9f8e7d6c5b4a39281706"),
    ("postgres URL password", "psql postgres://admin:hunter2secret@db:5432/app", "hunter2secret"),
    ("redis URL password", "redis-cli -u redis://:r3disPassw0rd@cache:6379/0 ping", "r3disPassw0rd"),
    ("mysql -p password", "mysql -u root -pS3cretRootPw -h db app", "S3cretRootPw"),
    ("docker login -p", "docker login -u bot -p dckr_pat_AbCdEf123456 registry.example.com", "dckr_pat_AbCdEf123456"),
    ("sshpass -p", "sshpass -p 'Sup3rSecretSsh' ssh root@10.0.0.5 uptime", "Sup3rSecretSsh"),
    ("JSON api_key", '{"api_key": "a8f5f167f44f4964e6c998dee827110c", "model": "x"}', "a8f5f167f44f4964e6c998dee827110c"),
    ("JSON password", '{"username": "svc", "password": "Tr0ub4dor&3xyz"}', "Tr0ub4dor&3xyz"),
    ("secret variable", "export HF_TOKEN=myverysecretvalue", "myverysecretvalue"),
    ("password variable", "DB_PASSWORD='correct-horse-battery' ./migrate", "correct-horse-battery"),
    ("--api-key flag", "vllm serve model --api-key tok-abcdef123456", "tok-abcdef123456"),
    ("--password flag", "mc alias set s3 http://minio --password 'Min10Secret!'", "Min10Secret!"),
    ("RSA private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAx"),
    ("OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAA"),
    ("PGP private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0000000000\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF0000000000"),
]
BENIGN = [
    "pkill -f sk-learn-feature-pipeline-worker",
    "MAX_TOKENS=4096 python bench.py",
    "export TOKENIZERS_PARALLELISM=false",
    "export OPENAI_API_KEY=$OPENAI_API_KEY_PROD",
    '{"max_tokens": 4096, "temperature": 0}',
    "GOOGLE_APPLICATION_CREDENTIALS=/secrets/sa.json SSH_KEY_FILE=/home/u/.ssh/id_ed25519 ./deploy.sh",
]


@pytest.mark.parametrize(("what", "text", "secret"), PLANTED, ids=[p[0] for p in PLANTED])
def test_every_planted_kind_is_redacted(what: str, text: str, secret: str) -> None:
    r = Redactor()
    assert secret not in r(text)
    assert r.kinds()


@pytest.mark.parametrize("text", BENIGN)
def test_look_alikes_that_are_evidence_are_kept(text: str) -> None:
    r = Redactor()
    assert r(text) == text
    assert r.kinds() == []


def test_planted_set_covers_at_least_40_kinds() -> None:
    assert len({p[0] for p in PLANTED}) >= 40


@pytest.mark.parametrize(("text", "secret"), [
    ("api_key: a8f5f167f44f4964e6c998dee827110c", "a8f5f167f44f4964e6c998dee827110c"),  # YAML
    ("  password: Tr0ub4dor&3xyz", "Tr0ub4dor&3xyz"),
    ("{type: service_account, private_key_id: a1b2c3d4e5a1b2c3d4e5}", "a1b2c3d4e5a1b2c3d4e5"),  # quotes gone
])
def test_config_lines_and_unquoted_json_are_redacted(text: str, secret: str) -> None:
    assert secret not in Redactor()(text)


@pytest.mark.parametrize("text", ["max_tokens: 4096", "password: $DB_PASSWORD", "token: null",
                                  "the secret: it works"])
def test_config_look_alikes_are_kept(text: str) -> None:
    assert Redactor()(text) == text


def test_a_json_document_is_redacted_whole_and_an_argv_as_one_command_line() -> None:
    from analyzer.report.redact import redact_tree

    doc = {"argv": ["vllm", "serve", "m", "--api-key", "tok-abcdef123456"], "n": 3,
           "nested": [{"HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH": ["mysql", "-pS3cretRootPw"]}],
           "clean": ["ls", "-la"]}
    out = redact_tree(doc)
    assert out["argv"] == ["vllm", "serve", "m", "--api-key", MASK] and out["n"] == 3
    assert out["nested"] == [{f"HF_TOKEN={MASK}": ["mysql", f"-p{MASK}"]}]
    assert out["clean"] is doc["clean"]  # nothing to hide: not copied
    key = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAx", "-----END RSA PRIVATE KEY-----", "x"]
    assert "MIIEowIBAAKCAQEAx" not in str(redact_tree(key))


def test_a_secret_is_redacted_before_a_line_is_cut() -> None:
    from analyzer.report.redact import clip

    text = "export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 && run"
    assert "sk-ant" not in clip(text, 40) and clip(text, 40).endswith("…")
