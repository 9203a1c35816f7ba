"""Which HTTP interactions belong to which model call, so that a transcript lands on the right one.

:class:`RecordingProvider` puts a :class:`ModelCall` in a context variable while the wrapped
provider runs; a recording transport that handles a request in that context adds a
:class:`Slot` for it. When the call's stream ends, its transcript goes to the last slot (retries
record several; the last answered). The response of that slot may still be open then (an async
generator not yet closed), so whichever of the two happens second does the attaching.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from dataclasses import dataclass, field

from ._format import Interaction, Transcript


@dataclass(slots=True)
class Slot:
    """One request recorded on behalf of a model call; ``interaction`` is set when it finishes."""

    interaction: Interaction | None = None


@dataclass(slots=True)
class ModelCall:
    """The requests one model call made through recording transports, and its transcript."""

    slots: list[Slot] = field(default_factory=list)
    transcript: Transcript | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def request_started(self) -> Slot:
        slot = Slot()
        with self.lock:
            self.slots.append(slot)
        return slot

    def request_finished(self, slot: Slot, interaction: Interaction) -> None:
        with self.lock:
            slot.interaction = interaction
            if self.transcript is not None and self.slots[-1] is slot:
                interaction.transcript = self.transcript

    def finished(self, transcript: Transcript) -> bool:
        """Record the transcript; False when no request was recorded for this call."""
        with self.lock:
            self.transcript = transcript
            if not self.slots:
                return False
            last = self.slots[-1].interaction
            if last is not None:
                last.transcript = transcript
            return True


CURRENT_CALL: ContextVar[ModelCall | None] = ContextVar("loopkit_recording_call", default=None)
