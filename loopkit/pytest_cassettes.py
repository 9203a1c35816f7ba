"""loopkit's cassette plugin for pytest (entry point ``pytest11``: ``loopkit_cassettes``).

A test asks for the ``loopkit_cassette`` fixture and gets a cassette of its own. Every cassette
lives in one folder, ``cassettes/`` next to the ini file (ini option ``loopkit_cassette_dir``,
relative to the ini file as pytest's own paths are). A test's cassette is, by default,
``<folder>/<test file's path from the rootdir, without .py>/<test name>.json``; the
``loopkit_cassette`` marker may name another file, relative to that same folder (or absolute),
and options::

    @pytest.mark.loopkit_cassette(record_mode="once")
    def test_agent(loopkit_cassette):
        client = httpx.Client(transport=loopkit_cassette.transport())
        ...

The record mode comes from the marker, else ``--loopkit-record=MODE``, else ``none``. While a
cassette only replays, every non-loopback connection fails the test, whichever client makes it.
At teardown: a request that missed the cassette fails the test with the first miss and its diff
(even when a client swallowed it), unless that miss is already the test's failure; a recorded
cassette is saved only when the test passed (merged under the file's lock with what other
pytest-xdist workers saved; atomically; refused if a secret survived), so a test that fails
while recording leaves the previous file byte for byte; after a passing test, interactions that
were never requested fail it (``fail_unplayed=False`` allows it). loopkit is imported lazily;
all state lives on the test item.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

_MODES = ("none", "once", "new_episodes", "all", "rewrite")
_OUTCOME = pytest.StashKey[bool]()
_CALL_ERROR = pytest.StashKey["BaseException | None"]()

_RECORD_HELP = (
    "cassette record mode, as in vcrpy: none (default: replay only; a request not in the cassette "
    "fails), once (record when the file does not exist, else as none), new_episodes (replay what "
    "matches, record and append the rest), all (replay nothing, record everything; a recorded "
    "interaction replaces the ones its request matches, the others stay); plus rewrite "
    "(pytest-recording's: replay nothing, save only what this run recorded). Unlike vcrpy, a "
    "test that fails saves nothing in any mode (the old file stays as it was), and pytest-xdist "
    "workers recording into one file merge under a file lock"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("loopkit")
    group.addoption(
        "--loopkit-record",
        choices=_MODES,
        default=None,
        metavar="MODE",
        help=_RECORD_HELP,
    )
    parser.addini("loopkit_cassette_dir", "folder of the cassettes, relative to the ini file (default: cassettes)", default="cassettes")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "loopkit_cassette(path=None, *, record_mode=None, fail_unplayed=True, allow_network=False, timing=0.0, "
        "scrubber=None, allow_playback_repeats=False): options of the test's cassette",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_OUTCOME] = report.passed
        item.stash[_CALL_ERROR] = call.excinfo.value if call.excinfo is not None else None
    return report


def cassette_dir(config: pytest.Config) -> Path:
    """The folder every relative cassette path is resolved against: ``loopkit_cassette_dir``
    relative to the ini file's folder (the rootdir when there is no ini file)."""
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return base / config.getini("loopkit_cassette_dir")


def _default_path(item: pytest.Item) -> Path:
    test_file = Path(str(item.path))
    root = item.config.rootpath
    module = test_file.relative_to(root).with_suffix("") if test_file.is_relative_to(root) else Path(test_file.stem)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.name).strip("_")
    return cassette_dir(item.config) / module / f"{name}.json"


class CassetteFixture:
    """What the ``loopkit_cassette`` fixture gives a test.

    Attributes:
        cassette: the :class:`loopkit.recording.Cassette` in use.
        path: its file.
        record_mode: the mode in effect.
    """

    def __init__(self, cassette: Any, timing: float) -> None:
        self.cassette = cassette
        self.path: Path = cassette.path
        self.record_mode: str = cassette.record_mode
        self.timing = timing
        self.vcr_cassettes: list[Any] = []

    @contextmanager
    def vcr(self, **kwargs: Any) -> Iterator[Any]:
        """Record or replay this test's cassette through vcrpy (for clients whose transport
        cannot be injected, such as boto3); ``kwargs`` go to ``make_vcr``."""
        from loopkit.recording import make_vcr

        with make_vcr(record_mode=self.record_mode, **kwargs).use_cassette(str(self.path)) as cassette:  # saves nothing on an exception
            self.vcr_cassettes.append(cassette)
            yield cassette

    def transport(self, inner: Any = None, *, httpx_module: Any = None, **kwargs: Any) -> Any:
        """A :class:`~loopkit.recording.CassetteTransport` for an httpx (or httpx2) client;
        ``inner`` reaches the real service when recording."""
        from loopkit.recording import CassetteTransport

        kwargs.setdefault("timing", self.timing)
        return CassetteTransport(self.cassette, inner, httpx_module=httpx_module, **kwargs)

    def recording_provider(self, provider: Any) -> Any:
        """Wrap a provider so that its model calls are stored as transcripts."""
        from loopkit.recording import RecordingProvider

        return RecordingProvider(provider, self.cassette)

    def replay_provider(self, **kwargs: Any) -> Any:
        """A :class:`~loopkit.recording.ReplayProvider` over this cassette's transcripts."""
        from loopkit.recording import ReplayProvider

        return ReplayProvider(self.cassette, **kwargs)


@pytest.fixture
def loopkit_cassette(request: pytest.FixtureRequest) -> Iterator[CassetteFixture]:
    """The test's cassette (see the module docstring)."""
    from loopkit.recording import Cassette, block_network

    marker = request.node.get_closest_marker("loopkit_cassette")
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    path = Path(marker.args[0]) if marker and marker.args else options.pop("path", None)
    if path is None:
        path = _default_path(request.node)
    elif not Path(path).is_absolute():
        path = cassette_dir(request.config) / path
    mode = options.pop("record_mode", None) or request.config.getoption("--loopkit-record") or "none"
    fail_unplayed = options.pop("fail_unplayed", True)
    allow_network = options.pop("allow_network", False)
    timing = options.pop("timing", 0.0)
    cassette = Cassette(path, record_mode=mode, **options)
    with ExitStack() as stack:
        guard = None if (cassette.records or allow_network) else stack.enter_context(block_network())
        fixture = CassetteFixture(cassette, timing)
        yield fixture
    from loopkit.errors import raise_first

    passed = request.node.stash.get(_OUTCOME, False)
    raise_first(cassette.harness_errors, request.node.stash.get(_CALL_ERROR, None))
    if cassette.recorded and passed:
        cassette.save()
    if guard is not None and guard.attempts and passed:
        pytest.fail(f"the test tried to reach the network while replaying {path}: {', '.join(guard.attempts)}", pytrace=False)
    if not (fail_unplayed and cassette.replays and passed):
        return
    if fixture.vcr_cassettes:
        for vc in fixture.vcr_cassettes:
            if not vc.all_played:
                from loopkit.errors import UnplayedInteractions

                raise UnplayedInteractions(f"{path}: {len(vc.data) - vc.play_count} recorded interaction(s) were never requested (through vcrpy)")
    else:
        cassette.assert_all_played()
