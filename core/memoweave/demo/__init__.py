"""``memoweave demo``: a small multi-session conversation, ingested and searched offline."""

from memoweave.demo.runner import DemoReport, run_demo
from memoweave.demo.sample import SampleConversation, load_sample

__all__ = ["DemoReport", "SampleConversation", "load_sample", "run_demo"]
