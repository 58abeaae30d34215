"""``set_fields`` leaves an event exactly as setting its fields one by one does, and never skips a
check a model asks for (validated assignment, frozen)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from analyzer.events import AssistantEvent, Diagnostic, Level, ToolEvent
from analyzer.ingest.base import set_fields

_RESULT = {"result_ref": "u2", "result_line": 7, "result_ts": datetime(2026, 1, 1, tzinfo=UTC), "is_error": False,
           "truncated": True, "output": "ok\n", "exit_code": 1, "interrupted": True, "task_id": "b1", "index": 3}


@pytest.mark.parametrize("event", [ToolEvent(name="Bash", command="ls", line=2), AssistantEvent(text="hi", line=1)])
def test_fields_set_at_once_are_the_fields_set_one_by_one(event: ToolEvent | AssistantEvent) -> None:
    values = _RESULT if isinstance(event, ToolEvent) else {"index": 3, "thinking": "hm"}
    by_one, at_once = event.model_copy(deep=True), event.model_copy(deep=True)
    for name, value in values.items():
        setattr(by_one, name, value)
    set_fields(at_once, values)
    assert at_once == by_one
    assert at_once.model_fields_set == by_one.model_fields_set
    assert at_once.model_dump_json() == by_one.model_dump_json()
    assert at_once.model_dump(exclude_unset=True) == by_one.model_dump(exclude_unset=True)


class _Checked(BaseModel):
    model_config = ConfigDict(validate_assignment=True)
    n: int = 0


def test_a_model_that_validates_assignments_still_does() -> None:
    m = _Checked()
    set_fields(m, {"n": "4"})
    assert m.n == 4  # validated (coerced), not stored as text
    with pytest.raises(ValidationError):
        set_fields(m, {"n": "four"})


def test_a_frozen_model_stays_frozen() -> None:
    d = Diagnostic(level=Level.info, message="m")
    with pytest.raises(ValidationError):
        set_fields(d, {"message": "other"})
