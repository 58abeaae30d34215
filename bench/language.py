"""Accuracy and speed of analyzer.lifecycle.language on the labelled user messages.

Prints precision and recall per intent over tests/lifecycle/messages.yaml, entity accuracy, and
messages per second on one core: typical messages, and a realistic mix with pasted logs, fenced
code and long prose. Writes nothing.

    /work/venv/bin/python bench/language.py [--runs 3] [--repeat 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from analyzer.lifecycle import language
from analyzer.lifecycle.language import Intent

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "tests" / "lifecycle" / "messages.yaml"


def accuracy(cases: list[dict[str, object]]) -> None:
    readings = language.read_messages([str(c["text"]) for c in cases])
    print(f"labelled set: {len(cases)} messages")
    print(f"{'intent':<11} {'support':>7} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7}")
    for intent in Intent:
        tp = fp = fn = 0
        for case, reading in zip(cases, readings, strict=True):
            expected = intent.value in (case.get("intents") or [])  # type: ignore[operator]
            got = intent in reading.intents
            tp += expected and got
            fp += got and not expected
            fn += expected and not got
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        print(f"{intent.value:<11} {tp + fn:>7} {tp:>4} {fp:>4} {fn:>4} {precision:>9.3f} {recall:>7.3f}")
    exact = sum(
        sorted(i.value for i in r.intents) == sorted(c.get("intents") or [])  # type: ignore[type-var]
        for c, r in zip(cases, readings, strict=True)
    )
    entities = sum(
        all(sorted(getattr(r, key)) == sorted(c.get(key) or [])  # type: ignore[type-var]
            for key in ("ports", "kinds", "hosts", "units"))
        for c, r in zip(cases, readings, strict=True)
    )
    print(f"exact intent sets: {exact}/{len(cases)}   exact entities (ports, kinds, hosts, units): "
          f"{entities}/{len(cases)}")


def _log_paste(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        kind = rng.random()
        if kind < 0.5:
            out.append(f"INFO 11-02 10:{i % 60:02d}:{rng.randrange(60):02d} engine.py:{rng.randrange(900)}] "
                       f"Avg prompt throughput: {rng.random() * 900:.1f} tokens/s, "
                       f"Running: {rng.randrange(64)} reqs")
        elif kind < 0.8:
            out.append(f"INFO:     127.0.0.1:{rng.randrange(30000, 60000)} - \"POST /v1/chat/completions "
                       f"HTTP/1.1\" 200 OK")
        else:
            out.append(f"[2025-11-02 10:{i % 60:02d}:00 TP{rng.randrange(8)}] Decode batch. #running-req: "
                       f"{rng.randrange(64)}, #token: {rng.randrange(90000)}, gen throughput (token/s): 41.2")
    return "\n".join(out)


def _code_paste(rng: random.Random, lines: int) -> str:
    body = [f"    x{i} = compute(batch[{i}], port={rng.randrange(8000, 9000)})" for i in range(lines)]
    return "```python\ndef handler(batch):\n" + "\n".join(body) + "\n    return x0\n```"


def realistic_mix(typical: list[str], rng: random.Random, count: int) -> list[str]:
    """~88 % typical messages, 8 % with a pasted log or code block (1-8 KB), 3 % long pastes
    (20-60 KB), 1 % long prose (10-20 KB). Every text is distinct, so the memo never helps."""
    out: list[str] = []
    for i in range(count):
        roll = rng.random()
        base = rng.choice(typical)
        if roll < 0.88:
            out.append(f"{base} #{i}")
        elif roll < 0.92:
            out.append(f"it fails like this:\n{_log_paste(rng, rng.randrange(10, 80))}\n{base} #{i}")
        elif roll < 0.96:
            out.append(f"{base}\n{_code_paste(rng, rng.randrange(10, 60))}\nwhat do you think? #{i}")
        elif roll < 0.99:
            out.append(f"here is the full log #{i}\n{_log_paste(rng, rng.randrange(200, 600))}\n{base}")
        else:
            para = "We went through the design of the scheduler and the batching policy in detail. "
            out.append(para * rng.randrange(120, 250) + f"\n{base} #{i}")
    return out


def throughput(label: str, texts: list[str], runs: int, reader: Callable[[list[str]], object]) -> None:
    rates = []
    for run in range(runs):
        language.clear_cache()
        batch = [f"{t} r{run}" for t in texts]  # distinct per run: measure reading, not the memo
        start = time.perf_counter()
        reader(batch)
        rates.append(len(batch) / (time.perf_counter() - start))
    size = sum(map(len, texts)) / len(texts)
    print(f"{label:<34} {len(texts):>6} msgs  mean {size:>7.0f} chars  "
          f"{statistics.median(rates):>7.0f} msg/s "
          f"(median of {runs}; min {min(rates):.0f}, max {max(rates):.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20,
                        help="copies of the labelled set for the speed test")
    args = parser.parse_args()
    cases = yaml.safe_load(SET.read_text(encoding="utf-8"))["messages"]
    start = time.perf_counter()
    language.read_message("warm up")  # builds the spaCy pipeline once
    print(f"pipeline build: {time.perf_counter() - start:.2f} s")
    accuracy(cases)
    typical = [str(c["text"]) for c in cases if len(str(c["text"])) < 400]
    rng = random.Random(20260101)
    plain = [f"{t} #{i}" for i in range(args.repeat) for t in typical]
    mix = realistic_mix(typical, rng, len(plain))
    print()
    throughput("typical, read_messages (batch)", plain, args.runs, language.read_messages)
    throughput("typical, read_message one by one", plain, args.runs,
               lambda batch: [language.read_message(t) for t in batch])
    throughput("realistic mix, read_messages", mix, args.runs, language.read_messages)
    longest = sorted(mix, key=len)[-20:]
    throughput("longest 20 of the mix", longest, args.runs, language.read_messages)
    language.clear_cache()
    repeated = [rng.choice(typical) for _ in range(len(plain))]
    start = time.perf_counter()
    language.read_messages(repeated)
    print(f"{'repeated texts (memo hits)':<34} {len(repeated):>6} msgs  "
          f"{len(repeated) / (time.perf_counter() - start):>26.0f} msg/s")


if __name__ == "__main__":
    main()
