"""asyncio wrappers of skilldb.Library and skilldb.Verifier.

Every method of the wrapped object becomes a coroutine that runs it in a
worker thread (``asyncio.to_thread``). The C++ calls release the GIL, so
queries and verifications awaited together run in parallel instead of
blocking the event loop of an async rollout loop:

    lib = await skilldb.aio.open(path, read_only=True)
    results = await asyncio.gather(*(lib.query(t) for t in texts))
"""

import asyncio
import functools

import skilldb


class _Async:
    """Wraps an object; its callables become coroutine functions."""

    def __init__(self, wrapped):
        self._wrapped = wrapped

    @property
    def wrapped(self):
        """The synchronous object."""
        return self._wrapped

    def __getattr__(self, name):
        attr = getattr(self._wrapped, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        async def call(*args, **kwargs):
            return await asyncio.to_thread(attr, *args, **kwargs)

        return call

    def __repr__(self):
        return f"Async{self._wrapped!r}"


class AsyncLibrary(_Async):
    """A skilldb.Library whose methods are awaited."""

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await asyncio.to_thread(self._wrapped.close)


class AsyncVerifier(_Async):
    """A skilldb.Verifier whose verify() is awaited."""


async def open(path, **kwargs):  # noqa: A001 - mirrors skilldb.open
    """skilldb.open in a worker thread; returns an AsyncLibrary."""
    return AsyncLibrary(await asyncio.to_thread(skilldb.open, path, **kwargs))


async def connect(url, **kwargs):
    """skilldb.connect in a worker thread; returns an AsyncLibrary."""
    return AsyncLibrary(await asyncio.to_thread(skilldb.connect, url, **kwargs))


async def verifier(backend="host", **kwargs):
    """skilldb.Verifier(...) in a worker thread; returns an AsyncVerifier."""
    return AsyncVerifier(await asyncio.to_thread(skilldb.Verifier, backend, **kwargs))
