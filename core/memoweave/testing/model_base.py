"""Shared pieces of the model suites (LLM, embedder, reranker): the remote-provider checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memoweave.errors import MemoweaveError
from memoweave.testing.helpers import ERROR_MARKER, closed_port_url, error_server, error_text


class RemoteProviderSupport:
    """Flags and the ``provider_for_url`` hook of providers that talk to a server.

    Set ``remote = True`` and override ``provider_for_url(self, base_url)`` to return a new
    provider pointed at ``base_url`` (``http://127.0.0.1:<port>``, no path: append ``/v1``
    or similar yourself). Keep retries and timeouts small in that instance.
    """

    remote: bool = False

    def provider_for_url(self, base_url: str) -> Any:
        """Override for remote providers: a provider instance using ``base_url``."""
        raise NotImplementedError(
            f"{type(self).__name__} sets remote = True but does not override "
            "provider_for_url(self, base_url)"
        )

    def _remote_provider(self, base_url: str) -> Any:
        if not self.remote:
            pytest.skip("not a remote provider (set remote = True to run)")
        return self.provider_for_url(base_url)


def check_unreachable(
    suite: RemoteProviderSupport, call: Callable[[Any], object], error: type[MemoweaveError]
) -> None:
    """``call(provider)`` against a closed port raises ``error``; close stays idempotent."""
    provider = suite._remote_provider(closed_port_url())
    try:
        with pytest.raises(error):
            call(provider)
    finally:
        provider.close()
        provider.close()


def check_http_500(
    suite: RemoteProviderSupport, call: Callable[[Any], object], error: type[MemoweaveError]
) -> None:
    """``call(provider)`` against the 500-server raises ``error`` carrying its message."""
    if not suite.remote:
        pytest.skip("not a remote provider (set remote = True to run)")
    with error_server() as url:
        provider = suite._remote_provider(url)
        try:
            with pytest.raises(error) as info:
                call(provider)
        finally:
            provider.close()
    assert ERROR_MARKER in error_text(info.value), (
        f"the server's message {ERROR_MARKER!r} is missing from the error: {info.value}"
    )
