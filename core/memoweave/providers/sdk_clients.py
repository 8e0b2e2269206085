"""A vendor SDK's two clients, as a provider with native async twins holds them.

:class:`SdkClients` keeps the sync client, built when the provider is (so configuration
errors such as a missing API key surface then), and builds the async client on first use
in each event loop: an SDK's async client is bound to the loop that created it, and a
provider may be driven by several loops over its life (``asyncio.run`` per call, tests).
``close`` releases the sync client, ``aclose`` both. The OpenAI and Ollama plugins'
transports are its subclasses; they add one method pair per request (``chat``/``achat``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class SdkClients:
    """``client`` (sync, built by the caller) and the async client ``build_async()`` makes,
    one per event loop. Both clients need ``close()`` (``await`` for the async one)."""

    def __init__(self, client: Any, build_async: Callable[[], Any]) -> None:
        self.client = client
        self._build_async = build_async
        self._aclient: Any = None
        self._aloop: asyncio.AbstractEventLoop | None = None

    def async_client(self) -> Any:
        """The running loop's async client (built on its first use in that loop)."""
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aloop is not loop:
            self._aclient = self._build_async()
            self._aloop = loop
        return self._aclient

    def close(self) -> None:
        """Close the sync client's connections."""
        self.client.close()

    async def aclose(self) -> None:
        """Close both clients' connections."""
        if self._aclient is not None:
            await self._aclient.close()
            self._aclient = None
        self.close()


__all__ = ["SdkClients"]
