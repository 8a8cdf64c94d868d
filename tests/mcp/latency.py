"""Counting the waits a run's tool latency adds: asyncio.sleep is wrapped so waits of exactly that many seconds
are recorded (nothing else in a run sleeps that long) and still happen."""

import asyncio


def count_waits(monkeypatch, seconds: float) -> list[float]:
    """The list that every `asyncio.sleep(seconds)` from now on appends to."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay, *args, **kwargs):
        if delay == seconds:
            waits.append(delay)
        return await real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    return waits
