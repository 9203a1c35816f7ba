"""Provider factories: ``module:callable`` or a built-in adapter name, called with the simulator.

A factory is a callable taking keyword arguments ``transport=`` (an httpx transport answering in
process) and/or ``base_url=`` (a simulator served on 127.0.0.1), and optionally ``retry=`` (a
:class:`~loopkit.retry.RetryPolicy` whose sleeps the suite records). It returns a
:class:`~loopkit.provider.Provider`. :func:`resolve_factory` reads a target string.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .._targets import import_target
from ..errors import UsageError
from ..provider import Provider

ProviderFactory = Callable[..., Provider]

SIM_MODEL = "sim-model"
SIM_KEY = "sim-key"


VARIANT_OPTIONS: dict[tuple[str, str], dict[str, Any]] = {("bedrock", "no-tool-result-status"): {"error_status": False}}
"""(protocol, variant) -> the options that build loopkit's own adapter for that model family."""


def builtin_factory(protocol: str, *, stream: bool = True, variant: str | None = None) -> ProviderFactory:
    """A factory for loopkit's own adapter of ``protocol`` (see :data:`loopkit.providers.ADAPTERS`),
    asking for streamed answers, or for single JSON bodies with ``stream=False``; built for the
    model family ``variant`` names (see :data:`VARIANT_OPTIONS`)."""
    from ..providers import adapter_class

    cls = adapter_class(protocol)
    options = VARIANT_OPTIONS.get((protocol, variant), {}) if variant is not None else {}

    def factory(*, transport: Any = None, base_url: str | None = None, retry: Any = None) -> Provider:
        kwargs: dict[str, Any] = {"model": SIM_MODEL, "api_key": SIM_KEY, "stream": stream, **options}
        if transport is not None:
            kwargs["transport"] = transport
        if base_url is not None:
            kwargs["base_url"] = base_url
        if retry is not None:
            kwargs["retry"] = retry
        return cls(**kwargs)

    factory.__name__ = f"{protocol}_factory" if stream else f"{protocol}_nonstreaming_factory"
    factory.__qualname__ = factory.__name__
    return factory


def resolve_factory(target: str | ProviderFactory, *, stream: bool | None = None, variant: str | None = None) -> ProviderFactory:
    """``"module:attr"`` (attr a factory callable), a built-in protocol name, or a callable.

    ``stream`` (True or False) builds a built-in adapter that asks for streamed answers or for
    single JSON bodies; for any other target it is a :class:`UsageError`, since a factory decides
    itself how its adapter asks (the suite reads it from the requests the adapter sends).
    ``variant`` builds a built-in adapter for that model family; any other factory builds its own."""
    from ..providers import ADAPTERS

    if stream is not None and not (isinstance(target, str) and target in ADAPTERS):
        name = target if isinstance(target, str) else getattr(target, "__qualname__", repr(target))
        raise UsageError(
            f"conformance: stream={stream} (--no-stream) chooses how a built-in adapter ({', '.join(ADAPTERS)}) asks for answers; "
            f"the factory {name} decides that itself (build its provider with streaming off instead)"
        )
    if callable(target):
        return target
    if target in ADAPTERS:
        return builtin_factory(target, stream=True if stream is None else stream, variant=variant)
    if ":" not in target:
        raise UsageError(
            f"conformance: unknown adapter {target!r}{did_you_mean(target, ADAPTERS)}; a target is a built-in adapter ({', '.join(ADAPTERS)}) or 'module:factory'"
        )
    obj = import_target(target, what="conformance target")
    if not callable(obj):
        raise UsageError(f"conformance target {target!r} is a {type(obj).__name__}, not a callable factory")
    return obj


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for a close match, else ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


@dataclass(slots=True, frozen=True)
class FactoryShape:
    """Which keyword arguments a factory takes."""

    transport: bool
    base_url: bool
    retry: bool


def factory_shape(factory: ProviderFactory) -> FactoryShape:
    """Read a factory's signature; raises :class:`UsageError` when it takes neither transport nor base_url."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return FactoryShape(transport=True, base_url=True, retry=True)
    anything = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    shape = FactoryShape(
        transport=anything or "transport" in params,
        base_url=anything or "base_url" in params,
        retry=anything or "retry" in params,
    )
    if not (shape.transport or shape.base_url):
        name = getattr(factory, "__qualname__", repr(factory))
        raise UsageError(f"conformance factory {name} takes neither transport= nor base_url=; it must take at least one")
    return shape
