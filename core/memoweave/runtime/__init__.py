"""How the core's pipelines run: written once as generators of steps
(:mod:`.steps`), driven synchronously by ``Memory`` or on an event loop by
``AsyncMemory`` (:mod:`.aio`), with writes ordered per scope (:mod:`.ordering`)."""
