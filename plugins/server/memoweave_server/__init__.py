"""memoweave-server: the REST server (``memoweave serve``).

``memoweave_server.app.create_app(MemoryService.from_config(config))`` is the ASGI app to
embed or test. This package's top level imports nothing heavy: the CLI loads it at start.
"""

__version__ = "0.1.0"
