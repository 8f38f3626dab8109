"""The days an incremental build recomputes, on either engine: every day from the first to the last a new row touches
(an end before the start, or none, counts as the start)."""

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.transform.planner import touched_days

D = dt.date


def test_the_days_new_rows_touch_hand_worked():
    rows = [
        (D(2026, 10, 5), D(2026, 10, 6)),  # a request across midnight: both days
        (D(2026, 10, 5), None),  # no end: its first day
        (D(2026, 10, 10), D(2026, 10, 9)),  # an end before the start: its first day
        (None, D(2026, 10, 20)),  # no first day: no day
        (D(2026, 10, 30), D(2026, 11, 1)),  # across a month's end: 30, 31 October and 1 November
    ]
    assert touched_days(rows) == [
        D(2026, 10, 5), D(2026, 10, 6), D(2026, 10, 10), D(2026, 10, 30), D(2026, 10, 31), D(2026, 11, 1)
    ]  # fmt: skip


_DAY = st.dates(min_value=D(2020, 1, 1), max_value=D(2030, 12, 31))


@settings(deadline=None)  # a loaded machine must not fail it on time
@given(st.lists(st.tuples(_DAY, st.one_of(st.none(), _DAY)), max_size=20))
def test_every_touched_day_lies_within_a_row_and_every_rows_first_day_is_touched(rows):
    days = touched_days(rows)
    assert days == sorted(set(days))
    touched = set(days)
    for day in days:
        assert any(first <= day <= max(first, last or first) for first, last in rows)
    for first, last in rows:
        # a row's days are all there, from its first to its last
        n = (max(first, last or first) - first).days
        assert all(first + dt.timedelta(days=k) in touched for k in range(n + 1))
