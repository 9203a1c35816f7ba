"""``steering_schedules()`` and ``follow_up_schedules()``: when queued user messages arrive."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from ..errors import UsageError
from ..messages import UserMessage


class Schedule:
    """A steering or follow-up callback that hands over given messages on given polls.

    Poll *n* (1-based, counted across the whole run) returns ``deliveries[n]``; every other poll
    returns ``[]``. The loop polls at fixed places (docs/loop-contract.md: before the first model
    call, after each executed tool call, after each round's ``turn_end``; follow-ups when the loop
    would stop), so a poll number names a moment of the run. Pass the schedule itself as
    ``steering=`` or ``follow_ups=``.

    Args:
        deliveries: poll number -> the messages (strings or UserMessages) that poll returns.
        label: how the messages are named in reprs (``steer``, ``follow-up``).

    Attributes:
        polls: how many times the loop has polled so far.
        returned: every message handed over so far, in order.

    Example::

        s = Schedule({2: ["stop, use 10 instead"]})
        result = loopkit.run(provider, "go", tools=tools, steering=s)
        assert s.returned[0] in result.messages
    """

    __slots__ = ("deliveries", "label", "polls", "returned")

    def __init__(self, deliveries: Mapping[int, Sequence[str | UserMessage]], *, label: str = "steer") -> None:
        for poll, items in deliveries.items():
            if not isinstance(poll, int) or poll < 1:
                raise UsageError(f"Schedule: poll numbers start at 1, got {poll!r}")
            if isinstance(items, (str, UserMessage)):
                raise UsageError(f"Schedule: poll {poll} must map to a list of messages, got a single {type(items).__name__}; wrap it in [...]")
        self.deliveries: dict[int, tuple[UserMessage, ...]] = {
            poll: tuple(UserMessage(content=m) if isinstance(m, str) else m for m in items) for poll, items in sorted(deliveries.items())
        }
        self.label = label
        self.polls = 0
        self.returned: list[UserMessage] = []

    @property
    def messages(self) -> list[UserMessage]:
        """Every scheduled message, in delivery order."""
        return [m for items in self.deliveries.values() for m in items]

    def __call__(self) -> list[UserMessage]:
        self.polls += 1
        out = list(self.deliveries.get(self.polls, ()))
        self.returned.extend(out)
        return out

    def fresh(self) -> Schedule:
        """The same schedule with its poll count reset (to run it again)."""
        return Schedule(self.deliveries, label=self.label)

    def __repr__(self) -> str:
        shown = {poll: [m.text for m in items] for poll, items in self.deliveries.items()}
        return f"Schedule({shown!r}, label={self.label!r})"


def _schedules(label: str, min_messages: int, max_messages: int, max_poll: int, fn: str) -> st.SearchStrategy[Schedule]:
    if min_messages < 0 or max_messages < min_messages:
        raise UsageError(f"{fn}(min_messages={min_messages}, max_messages={max_messages}): need 0 <= min_messages <= max_messages")
    if max_poll < 1:
        raise UsageError(f"{fn}(max_poll={max_poll}): polls are numbered from 1; give max_poll >= 1")

    return _schedule(label, min_messages, max_messages, max_poll)


@st.composite
def _schedule(draw: Any, label: str, min_messages: int, max_messages: int, max_poll: int) -> Schedule:
    n = draw(st.integers(min_value=min_messages, max_value=max_messages))
    polls = draw(st.lists(st.integers(min_value=1, max_value=max_poll), min_size=n, max_size=n))
    deliveries: dict[int, list[str]] = {}
    for i, poll in enumerate(sorted(polls), 1):  # numbered in delivery order
        deliveries.setdefault(poll, []).append(f"{label} {i}")
    return Schedule(deliveries, label=label)


def steering_schedules(*, min_messages: int = 0, max_messages: int = 3, max_poll: int = 8) -> st.SearchStrategy[Schedule]:
    """Steering callbacks (:class:`Schedule`) that return queued user messages on chosen polls.

    Poll 1 is the initial poll before the first model call; later polls follow each executed tool
    call and each ``turn_end`` (docs/loop-contract.md), so the schedules cover steering that arrives
    before a model call, after tool *k* of round *n*, and after a text reply. Several messages
    may arrive on one poll. Message texts are unique (``steer 1``, ``steer 2``...), so a test can
    tell a lost or duplicated message.

    Args:
        min_messages: fewest messages in the schedule.
        max_messages: most messages.
        max_poll: the latest poll that may deliver.

    Example::

        @given(scripts(tools), steering_schedules())
        def test_no_message_lost(script, steering):
            result = loopkit.run(ScriptedProvider(script), "go", tools=tools, steering=steering)
            delivered = [m for m in result.messages + result.pending if m in steering.returned]
            assert len(delivered) == len(steering.returned)
    """
    return _schedules("steer", min_messages, max_messages, max_poll, "steering_schedules")


def follow_up_schedules(*, min_messages: int = 0, max_messages: int = 3, max_poll: int = 4) -> st.SearchStrategy[Schedule]:
    """Follow-up callbacks (:class:`Schedule`): poll *n* is the *n*-th time the loop would stop.

    Args:
        min_messages: fewest messages.
        max_messages: most messages.
        max_poll: the latest poll that may deliver.

    Example::

        @given(follow_up_schedules(min_messages=1))
        def test_follow_ups_extend_the_run(follow_ups):
            result = loopkit.run(ScriptedProvider(["a", "b", "c", "d", "e"]), "go", follow_ups=follow_ups)
            assert all(m in result.messages + result.pending for m in follow_ups.returned)
    """
    return _schedules("follow-up", min_messages, max_messages, max_poll, "follow_up_schedules")
