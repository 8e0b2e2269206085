"""The demo's sample: a small multi-session conversation (run by ``memoweave demo``,
:mod:`memoweave.cli.demo_run`)."""

from memoweave.demo.sample import SampleConversation, load_sample

__all__ = ["SampleConversation", "load_sample"]
