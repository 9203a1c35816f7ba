"""Sessions with one MCP server through the official ``mcp`` SDK: :class:`AsyncMCPSession` (asyncio
or trio, ``async with``) and :class:`MCPSession` (``with``, from sync code: the async session runs
on an anyio blocking portal, a private event loop on a worker thread).

Each connection is held open by a task of its own, because the SDK's transports must be closed by
the task that opened them; that is what lets :meth:`AsyncMCPSession.restart` replace a dead
server from any task. The SDK is imported when a session opens, never by ``import loopkit``.
"""

from __future__ import annotations

import atexit
import os
import tempfile
from collections.abc import Iterable
from functools import partial
from typing import Any

from ..errors import UsageError
from ..tools import Tool
from ._server import (
    MCPConnectError,
    MCPProtocolError,
    MCPServer,
    MCPServerClosed,
    MCPTimeout,
    as_server,
)
from ._tools import async_tool, sync_tool

DEFAULT_TIMEOUT = 30.0
"""Seconds a ``tools/call`` may take before it fails with :class:`MCPTimeout` (None: no limit)."""
CONNECT_TIMEOUT = 60.0
"""Seconds for a server to start and finish the MCP handshake."""


def require_sdk() -> None:
    """Raise a clear error when the ``mcp`` SDK is not installed."""
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise UsageError("loopkit's MCP support needs the official MCP SDK: pip install 'loopkit[mcp]'") from exc


class _Connection:
    """One connected ``mcp.Client``, opened and closed by :meth:`run` (a task of the session)."""

    def __init__(self, server: MCPServer) -> None:
        import anyio

        self.server = server
        self.client: Any = None
        self.error: MCPConnectError | None = None
        self.dead = False
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") if server.command else None

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of a stdio server's standard error (empty for HTTP)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - limit))
            return self._stderr.read().strip()
        except (OSError, ValueError):
            return ""

    async def run(self, *, task_status: Any) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        server = self.server
        started = False
        try:
            if server.command:
                params = StdioServerParameters(
                    command=server.command[0],
                    args=list(server.command[1:]),
                    env={**os.environ, **(server.env or {})},
                    cwd=server.cwd,
                )
                client = Client(stdio_client(params, errlog=self._stderr), cache=None)
            else:
                client = Client(server.url, cache=None)
            async with client:
                self.client = client
                started = True
                task_status.started()
                await self._stop.wait()
        except Exception as exc:  # noqa: BLE001 - a start-up failure is raised by the opener; a dead server's close is not news
            if not started:
                # reported through the opener, not the task group (which would wrap it in a group)
                self.error = MCPConnectError(self._why(exc))
                self.error.__cause__ = exc
                task_status.started()
        finally:
            self.dead = True
            self._done.set()
            if self._stderr is not None and started:
                self._stderr.close()

    def _why(self, exc: BaseException) -> str:
        leaves = _leaves(exc)
        what = "; ".join(f"{type(e).__name__}: {e}" for e in leaves) or repr(exc)
        text = f"could not connect to MCP server `{self.server.label}`: {what}"
        tail = self.stderr_tail()
        if tail:
            text += f"\nits standard error ends with:\n{tail}"
        return text

    async def close(self) -> None:
        self._stop.set()
        await self._done.wait()


def _event() -> Any:
    import anyio

    return anyio.Event()


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


class AsyncMCPSession:
    """An open session with an MCP server, for async code.

    Args:
        server: an :class:`MCPServer`, a URL, or a command (list, or a string to split).
        timeout: seconds each ``tools/call`` may take (None: no limit).
        connect_timeout: seconds to start the server and finish the handshake.

    Example::

        async with AsyncMCPSession(MCPServer.stdio("python", "server.py")) as session:
            result = await loopkit.arun(provider, "Go.", tools=session.tools())
    """

    def __init__(self, server: Any, *, timeout: float | None = DEFAULT_TIMEOUT, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        require_sdk()
        self.server = as_server(server)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.restarts = 0
        self._tg: Any = None
        self._conn: _Connection | None = None
        self._spare: _Connection | None = None  # a stdio server started ahead, once one has had to restart
        self._spare_ready: Any = None
        self._specs: list[Any] = []

    async def __aenter__(self) -> AsyncMCPSession:
        import anyio

        if self._tg is not None:
            raise UsageError("this MCP session is already open")
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        try:
            await self._open()
        except BaseException:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
            self._tg = None
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
            spare, self._spare = self._spare, None
            if spare is not None and self._spare_ready.is_set():
                await spare.close()  # one still starting is cancelled with the task group below
        finally:
            tg, self._tg = self._tg, None
            if tg is not None:
                # the body's exception is the caller's: handing it to the task group would wrap it in a group
                tg.cancel_scope.cancel()
                await tg.__aexit__(None, None, None)

    async def _open(self) -> None:
        import anyio

        conn = _Connection(self.server)
        try:
            with anyio.fail_after(self.connect_timeout):
                await self._tg.start(conn.run)
                if conn.error is not None:
                    raise conn.error
                self._specs = await self._list(conn)
        except TimeoutError:
            await conn.close()
            raise MCPConnectError(
                f"MCP server `{self.server.label}` did not finish starting within {self.connect_timeout} s"
                + (f"; its standard error ends with:\n{conn.stderr_tail()}" if conn.stderr_tail() else "")
            ) from None
        self._conn = conn

    async def _list(self, conn: _Connection) -> list[Any]:
        specs: list[Any] = []
        cursor = None
        for _ in range(100):  # a paginator that never ends cannot hang the session
            page = await conn.client.list_tools(cursor=cursor, cache_mode="bypass")
            specs.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return specs

    async def restart(self) -> None:
        """Close the connection (a stdio server's process ends) and open a new one.

        A stdio server restarted this way may have to be again (a fuzzer finds the same crash
        many times), so a spare is started ahead, in the background, and the next restart takes
        it over. A call that finds the server dead restarts it without starting a spare: a
        crash in a loop's run is usually its only one."""
        await self._restart(ahead=True)

    async def _restart(self, *, ahead: bool) -> None:
        if self._tg is None:
            raise UsageError("this MCP session is not open: use it as `async with AsyncMCPSession(...)`")
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await conn.close()
        self.restarts += 1
        spare, self._spare = self._spare, None
        if spare is not None:
            await self._spare_ready.wait()
            if spare.error is None and not spare.dead:
                self._conn = spare
            else:
                await spare.close()
        if self._conn is None:
            await self._open()
        if ahead and self.server.command:
            self._spare_ready = ready = _event()
            self._spare = _Connection(self.server)
            self._tg.start_soon(self._start_spare, self._spare, ready)

    async def _start_spare(self, conn: _Connection, ready: Any) -> None:
        import anyio

        try:
            with anyio.fail_after(self.connect_timeout):
                await self._tg.start(conn.run)
        except TimeoutError:
            conn.error = MCPConnectError(f"MCP server `{self.server.label}` did not finish starting within {self.connect_timeout} s")
        finally:
            ready.set()

    @property
    def alive(self) -> bool:
        """False once a call saw the connection close (the next call reconnects)."""
        return self._conn is not None and not self._conn.dead

    def stderr_tail(self) -> str:
        """The end of a stdio server's standard error so far."""
        return self._conn.stderr_tail() if self._conn is not None else ""

    def list_tools(self) -> list[Any]:
        """The server's tools (``mcp.types.Tool``), as listed when the session opened."""
        return list(self._specs)

    def tool_spec(self, name: str) -> Any:
        for spec in self._specs:
            if spec.name == name:
                return spec
        known = ", ".join(s.name for s in self._specs) or "(none)"
        raise UsageError(f"MCP server `{self.server.label}` has no tool {name!r}; it lists: {known}")

    async def call(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """``tools/call``: the server's ``CallToolResult`` (``isError`` results included).

        Raises:
            MCPProtocolError: a JSON-RPC error instead of a result, or a malformed result.
            MCPTimeout: no answer within ``timeout`` (default: the session's).
            MCPServerClosed: the connection closed (the server process died). The next call
                starts a stdio server again.
        """
        import anyio
        import mcp_types as types
        import pydantic
        from mcp.shared.exceptions import MCPError

        if self._tg is None:
            raise UsageError("this MCP session is not open")
        if self._conn is None or self._conn.dead:
            await self._restart(ahead=False)
        conn = self._conn
        assert conn is not None
        limit = self.timeout if timeout is None else timeout
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        try:
            return await conn.client.session.send_request(request, types.CallToolResult, request_read_timeout_seconds=limit)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                raise self._closed(conn, name) from None
            if exc.code == types.REQUEST_TIMEOUT:
                raise MCPTimeout(f"MCP server `{self.server.label}` did not answer tools/call {name!r} within {limit} s") from None
            raise MCPProtocolError(
                f"MCP server answered tools/call {name!r} with JSON-RPC error {exc.code}: {exc.message}",
                code=exc.code,
                data=exc.data,
            ) from None
        except pydantic.ValidationError as exc:
            raise MCPProtocolError(f"MCP server answered tools/call {name!r} with a malformed result: {exc}", code=None) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            raise self._closed(conn, name) from None

    async def responsive(self, timeout: float) -> bool:
        """Whether the server still answers (a ``tools/list`` within ``timeout`` seconds)."""
        import anyio

        conn = self._conn
        if conn is None or conn.dead:
            return False
        try:
            with anyio.fail_after(timeout):
                await conn.client.list_tools(cache_mode="bypass")
        except Exception:  # noqa: BLE001 - any failure means "not answering"
            return False
        return True

    def _closed(self, conn: _Connection, name: str) -> MCPServerClosed:
        conn.dead = True
        tail = conn.stderr_tail()
        what = "its process exited" if self.server.command else "the HTTP connection failed"
        text = f"MCP server `{self.server.label}` closed the connection during tools/call {name!r} ({what})"
        if tail:
            text += f"; its standard error ends with:\n{tail}"
        return MCPServerClosed(text, stderr=tail)

    def tools(self, names: Iterable[str] | None = None, *, source: str = "mcp") -> list[Tool]:
        """The server's tools as loopkit tools (all, or the ``names`` given) whose execution
        awaits ``tools/call``; use them with :func:`loopkit.arun` on this event loop."""
        return [async_tool(spec, self.call, source=source) for spec in _select(self, names)]

    def tool(self, name: str, *, rename: str | None = None, description: str | None = None, source: str = "mcp") -> Tool:
        """One tool, as :meth:`tools` makes them; ``rename`` is what the model calls it."""
        return async_tool(self.tool_spec(name), self.call, source=source, name=rename, description=description)


class MCPSession:
    """An open session with an MCP server, for sync code; the same calls as
    :class:`AsyncMCPSession`, blocking.

    Example::

        with MCPSession(MCPServer.stdio("python", "server.py")) as session:
            result = loopkit.run(provider, "Go.", tools=session.tools())
    """

    def __init__(self, server: Any, *, timeout: float | None = DEFAULT_TIMEOUT, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self._async = AsyncMCPSession(server, timeout=timeout, connect_timeout=connect_timeout)
        self._portal_cm: Any = None
        self._portal: Any = None
        self._session_cm: Any = None

    @property
    def server(self) -> MCPServer:
        return self._async.server

    @property
    def timeout(self) -> float | None:
        return self._async.timeout

    @property
    def restarts(self) -> int:
        return self._async.restarts

    def __enter__(self) -> MCPSession:
        from anyio.from_thread import start_blocking_portal

        if self._portal is not None:
            raise UsageError("this MCP session is already open")
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._session_cm = self._portal.wrap_async_context_manager(self._async)
            self._session_cm.__enter__()
        except BaseException as exc:
            self._portal_cm.__exit__(type(exc), exc, exc.__traceback__)
            self._portal = self._portal_cm = self._session_cm = None
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._portal is None:
            return
        try:
            self._session_cm.__exit__(*exc_info)
        finally:
            portal_cm = self._portal_cm
            self._portal = self._portal_cm = self._session_cm = None
            portal_cm.__exit__(None, None, None)

    def close(self) -> None:
        """Close the session (what leaving the ``with`` block does)."""
        self.__exit__(None, None, None)

    def _need(self) -> Any:
        if self._portal is None:
            raise UsageError("this MCP session is not open: use it as `with MCPSession(...) as session:`")
        return self._portal

    def call(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """:meth:`AsyncMCPSession.call`, blocking."""
        return self._need().call(partial(self._async.call, name, arguments, timeout=timeout))

    def submit(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Start :meth:`call` without waiting: a ``concurrent.futures.Future`` of its result (the
        fuzzer generates the next example while the server answers this one)."""
        return self._need().start_task_soon(partial(self._async.call, name, arguments, timeout=timeout))

    def restart(self) -> None:
        """:meth:`AsyncMCPSession.restart`, blocking."""
        self._need().call(self._async.restart)

    @property
    def alive(self) -> bool:
        return self._async.alive

    def responsive(self, timeout: float) -> bool:
        """:meth:`AsyncMCPSession.responsive`, blocking."""
        return bool(self._need().call(self._async.responsive, timeout))

    def stderr_tail(self) -> str:
        return self._async.stderr_tail()

    def list_tools(self) -> list[Any]:
        return self._async.list_tools()

    def tool_spec(self, name: str) -> Any:
        return self._async.tool_spec(name)

    def tools(self, names: Iterable[str] | None = None, *, source: str = "mcp") -> list[Tool]:
        """The server's tools as loopkit tools (all, or the ``names`` given) whose execution is a
        blocking ``tools/call``; they work with :func:`loopkit.run`, :func:`loopkit.arun` and
        :class:`loopkit.Runtime`."""
        self._need()
        return [sync_tool(spec, self.call, source=source) for spec in _select(self._async, names)]

    def tool(self, name: str, *, rename: str | None = None, description: str | None = None, source: str = "mcp") -> Tool:
        """One tool, as :meth:`tools` makes them; ``rename`` is what the model calls it."""
        self._need()
        return sync_tool(self.tool_spec(name), self.call, source=source, name=rename, description=description)


_SHARED: dict[MCPServer, MCPSession] = {}


def shared_session(server: Any) -> MCPSession:
    """An open :class:`MCPSession` with ``server``, shared by everyone who asks for the same
    server in this process (scenario files name servers this way) and closed when the process
    exits."""
    server = as_server(server)
    session = _SHARED.get(server)
    if session is None or session._portal is None:
        session = MCPSession(server)
        session.__enter__()
        if not _SHARED:
            atexit.register(close_shared_sessions)
        _SHARED[server] = session
    return session


def close_shared_sessions() -> None:
    """Close every session :func:`shared_session` opened (stdio servers stop)."""
    while _SHARED:
        _, session = _SHARED.popitem()
        try:
            session.close()
        except Exception:  # noqa: BLE001 - closing at exit: a server that is already gone is fine
            pass


def _select(session: AsyncMCPSession, names: Iterable[str] | None) -> list[Any]:
    if names is None:
        return session.list_tools()
    if isinstance(names, str):
        names = [names]
    return [session.tool_spec(n) for n in names]
