"""The lemma dictionary's memory (issue 14): the keyword tokeniser reads simplemma's
``low_memory`` store and :mod:`memoweave.index.lemma_forms` keeps the forms of each lemma
packed, with the same lemmas and forms as the plain dictionary (real simplemma data)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import defaultdict

import pytest
import simplemma
from simplemma.strategies.dictionaries import DefaultDictionaryFactory

from memoweave.index import lemma_forms
from memoweave.index.tokenize import lemmas

pytestmark = pytest.mark.skipif(
    lemma_forms.lemmatizer_id() != lemma_forms.EMULATED, reason="simplemma 2.0.0's data"
)


@pytest.fixture(scope="module")
def plain() -> dict[str, str]:
    """simplemma's English dictionary as a plain dict (its default store)."""
    return dict(DefaultDictionaryFactory().get_dictionary("en").items())


def test_lemmas_are_the_default_dictionarys(plain: dict[str, str]) -> None:
    words = sorted({key.lower() for key in plain})[::15]  # ~8,000 dictionary words
    words += ["zorblax", "flimtions", "blorfized", "2023", "caf\u00e9s", "stra\u00dfen", "x"]
    default = simplemma.Lemmatizer()  # the plain dict, a cache of its own
    assert lemmas(words)[1] == {word: default.lemmatize(word, "en").lower() for word in words}


def test_packed_forms_are_the_dictionarys_grouped(plain: dict[str, str]) -> None:
    expected: defaultdict[str, set[str]] = defaultdict(set)
    for key, value in plain.items():
        expected[value.lower()].add(key)
    forms = lemma_forms._dictionary_forms()
    assert forms._dict is None  # packed
    assert all(set(forms.get(lemma)) == keys for lemma, keys in expected.items())
    assert forms.get("zorblax") == forms.get("") == forms.get(max(expected) + "z") == ()


def test_entries_holding_a_separator_are_still_found() -> None:
    forms = lemma_forms._Forms(
        [(b"went", b"go"), (b"goes", b"Go"), (b"a\x1fb", b"x"), (b"Paris", b"Paris")]
    )
    assert set(forms.get("go")) == {"went", "goes"}
    assert forms.get("x") == ("a\x1fb",)
    assert forms.get("paris") == ("Paris",)
    assert forms.get("g") == forms.get("zz") == ()
    packed = lemma_forms._Forms([(b"went", b"go"), (b"goes", b"Go"), (b"Paris", b"Paris")])
    assert packed._dict is None and set(packed.get("go")) == {"went", "goes"}


_PROBE = """
import gc
def anon():
    return int(next(l for l in open("/proc/self/status") if l.startswith("RssAnon")).split()[1])
from memoweave.index import lemma_forms, tokenize
gc.collect(); before = anon()
tokenize.lemmas(["loading"])
lemma_forms._dictionary_forms()
gc.collect(); print((anon() - before) // 1024)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status")
def test_dictionary_and_forms_take_a_few_mib() -> None:
    """A new process loading both: ~10 MiB resident (the plain dict and a dict of tuples
    of forms took ~55)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PROBE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 20
