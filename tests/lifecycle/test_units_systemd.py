"""systemd units from before the log: a ``systemctl status`` that shows one active makes it an
instance, and a later ``restart`` or ``stop`` reaches it (its main PID), once.

Outputs follow ``systemctl status`` as systemd prints it (``Active: active (running) since …``,
``Main PID: 812 (nginx)``, ``Active: inactive (dead)``), not taken from any log.
"""

from __future__ import annotations

from pathlib import Path

from tests.lifecycle.test_units import states, world

STATUS = """\
  - bash: systemctl status nginx
    output: |
      ● nginx.service - A high performance web server and a reverse proxy server
           Loaded: loaded (/lib/systemd/system/nginx.service; enabled; preset: enabled)
           Active: active (running) since Mon 2026-11-30 08:00:00 UTC; 1 day ago
         Main PID: 812 (nginx)
"""


def test_a_restart_of_a_unit_from_before_the_log_stops_it_and_starts_it_again(tmp_path: Path) -> None:
    w = world(tmp_path, STATUS + """\
  - bash: sudo systemctl start nginx
  - bash: sudo systemctl restart nginx
  - bash: sudo systemctl stop nginx
  - bash: systemctl status nginx
    output: |
      ○ nginx.service - A high performance web server and a reverse proxy server
           Active: inactive (dead) since Tue 2026-12-01 10:00:00 UTC; 1s ago
""")
    key = "local/unit:nginx"
    assert w.instances[key].owner == "before" and w.instances[key].pids == [812]
    restart, stop = w.kills()
    assert [v.instance for v in restart.victims] == [key]  # the unit from before, by its unit
    assert [v.instance for v in stop.victims] == [key]  # once: the listed unit runs as the restart's launch now
    assert states(w, key) == [("starting", 0), ("stopped", 2), ("starting", 2), ("stopped", 3)]
    start = w.launches(key)[0]
    assert start.event == 1 and "changes nothing" in start.detail  # it was active already


def test_is_active_of_a_restarted_unit_agrees_and_a_failed_one_has_failed(tmp_path: Path) -> None:
    w = world(tmp_path, STATUS + """\
  - bash: sudo systemctl restart nginx && systemctl is-active nginx
    output: active
  - bash: sudo systemctl restart nginx; systemctl is-active nginx
    output: failed
""")
    key = "local/unit:nginx"
    assert states(w, key) == [("starting", 0), ("stopped", 1), ("starting", 1), ("stopped", 2), ("starting", 2),
                              ("failed", 2)]
    (failure,) = w.failures(key)
    assert failure.event == 2 and failure.quote == "failed"
