"""Query words no memory contains are scored exactly as with the lemma dictionary loaded
(:mod:`memoweave.index.lemma_forms`), on the real simplemma and a real SQLite index."""

from __future__ import annotations

from pathlib import Path

import pytest
import simplemma

from memoweave.index import lemma_forms
from memoweave.index.keyword_index import KeywordDoc, KeywordIndex
from memoweave.index.tokenize import lemmatizer_id
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope

ALICE = Scope.of(user_id="alice", operation="test")
TEXTS = [
    "Caroline plays the piano every evening",
    "Melanie paints boats in 2023",
    "A good flimtion of the organization",
    "Caroline went to Lisbon with her children",
]
QUERIES = [
    "What instrument does Caroline play?",  # one word in the dictionary, lemma not indexed
    "Caroline played pianos",  # forms of indexed lemmas, never indexed themselves
    "better boat",  # a form whose lemma ("good") is indexed
    "flimtions organizations",  # not in the dictionary: its rules give an indexed lemma
    "zorblax Melanie",  # not in the dictionary, lemma not indexed
    "violins violin",  # two unindexed words sharing a lemma
    "violin cello paints",  # two unindexed words
    "2024 Lisbon",  # a number never indexed
    "children going",
]


def all_scores(index: KeywordIndex, query: str) -> tuple[object, ...]:
    scored = index.scores(query, ALICE, statuses=["active"], limit=10)
    ids = [f"m{i}" for i in range(len(TEXTS))]
    return scored.hits, scored.ceiling, scored.score_of(ids)


def indexed(tmp_path: Path, texts: list[str]) -> tuple[HistoryStore, KeywordIndex]:
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    with history.transaction() as conn:
        index.upsert(
            conn,
            [KeywordDoc(f"m{i}", t, "alice", None, None, "active") for i, t in enumerate(texts)],
        )
    return history, index


def test_emulated_version_is_the_installed_one() -> None:
    assert lemmatizer_id() == lemma_forms.EMULATED, "check rule_lemma against this simplemma"


@pytest.mark.parametrize(
    "word", ["zorblaxcies", "qwertydoms", "zzisms", "zzists", "blorfments", "glimnces",
             "frobships", "flimtions", "zzums", "blorfized", "qqerves", "zorblax", "12345",
             "qzx", "zzcies", "xyzabcdef"],
)  # fmt: skip
def test_rule_lemma_is_simplemmas_for_words_outside_its_dictionary(word: str) -> None:
    assert not simplemma.is_known(word, lang="en")
    assert lemma_forms.rule_lemma(word) == simplemma.lemmatize(word, lang="en").lower()


def test_unindexed_query_words_score_as_with_the_dictionary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history, index = indexed(tmp_path, TEXTS)
    fast = {q: all_scores(index, q) for q in QUERIES}
    # every word lemmatized by the loaded simplemma, as before
    monkeypatch.setattr(lemma_forms, "known_lemmas", lambda conn, words, limit: {})
    for query in QUERIES:
        assert fast[query] == all_scores(index, query), query
    history.close()


def test_stand_in_only_for_one_word_of_an_unindexed_lemma(tmp_path: Path) -> None:
    history, _ = indexed(tmp_path, TEXTS)
    conn = history.connection
    assert lemma_forms.known_lemmas(conn, ["caroline", "instrument"], 10) == {
        "caroline": "caroline",
        "instrument": " instrument",
    }
    assert "instrument" not in lemma_forms.known_lemmas(conn, ["cello", "instrument"], 10)
    assert lemma_forms.known_lemmas(conn, ["played"], 10) == {"played": "play"}
    assert lemma_forms.known_lemmas(conn, ["flimtions"], 10) == {}  # rule lemma indexed
    assert lemma_forms.known_lemmas(conn, ["caroline", "instrument"], 1) == {
        "caroline": "caroline"  # a word past the limit: lemmatized as before
    }
    history.close()


def test_an_index_written_without_forms_gets_them_at_its_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patched:  # as an older memoweave wrote it
        patched.setattr(lemma_forms, "with_forms", lambda conn, lemmatizer, known: None)
        history, index = indexed(tmp_path, TEXTS[:2])
    conn = history.connection
    assert lemma_forms.known_lemmas(conn, ["instrument"], 10) == {}  # no forms: no stand-in
    with history.transaction() as write:
        index.upsert(write, [KeywordDoc("m9", "Lisbon", "alice", None, None, "active")])
    assert lemma_forms.known_lemmas(conn, ["played", "painted"], 10) == {
        "played": "play",
        "painted": "paint",
    }
    history.close()


def test_a_write_of_known_words_does_not_group_the_dictionary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history, index = indexed(tmp_path, TEXTS)
    fresh_process(monkeypatch)
    with history.transaction() as conn:  # nothing kept either: any need of forms groups them
        conn.execute("DELETE FROM keyword_forms")
    grouped: list[int] = []
    build = lemma_forms._dictionary_forms
    monkeypatch.setattr(lemma_forms, "_dictionary_forms", lambda: grouped.append(1) or build())
    with history.transaction() as conn:  # every word already indexed
        index.upsert(
            conn, [KeywordDoc("k1", "Caroline paints boats", "alice", None, None, "active")]
        )
    assert grouped == []
    with history.transaction() as conn:  # a new word: its forms are written
        index.upsert(conn, [KeywordDoc("k2", "Caroline sings", "alice", None, None, "active")])
    assert grouped == [1]
    assert lemma_forms.known_lemmas(history.connection, ["sang"], 10) == {"sang": "sing"}
    history.close()


def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the forms this process holds, as a new process would."""
    monkeypatch.setattr(lemma_forms, "_held", {})


def test_a_new_process_reads_the_forms_its_home_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history, index = indexed(tmp_path, TEXTS)  # this process may hold the forms already
    kept = history.connection.execute("SELECT lemmatizer, layout FROM keyword_forms").fetchall()
    assert kept == [(lemmatizer_id(), lemma_forms.FORMS_LAYOUT)]
    fresh_process(monkeypatch)

    def no_grouping() -> None:
        raise AssertionError("the dictionary was grouped again")

    monkeypatch.setattr(lemma_forms, "_dictionary_forms", no_grouping)
    with history.transaction() as conn:  # a new word: its forms come from the table
        index.upsert(conn, [KeywordDoc("k2", "Caroline sings", "alice", None, None, "active")])
    assert lemma_forms.known_lemmas(history.connection, ["sang"], 10) == {"sang": "sing"}
    history.close()


def test_a_damaged_row_of_forms_is_grouped_and_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history, index = indexed(tmp_path, TEXTS)
    conn = history.connection
    good = conn.execute("SELECT starts, text FROM keyword_forms").fetchone()
    damages = {  # not zlib; no lines; each time a new word, so the forms are read
        "text = x'00'": ("Melanie swims", "swam", "swim"),
        "starts = x'789c0300000000'": ("Melanie drives", "drove", "drive"),
    }
    for n, (damage, (text, form, lemma)) in enumerate(damages.items()):
        with history.transaction() as write:
            write.execute(f"UPDATE keyword_forms SET {damage}")
        fresh_process(monkeypatch)
        with history.transaction() as write:
            index.upsert(write, [KeywordDoc(f"k{n}", text, "alice", None, None, "active")])
        assert conn.execute("SELECT starts, text FROM keyword_forms").fetchone() == good
        assert lemma_forms.known_lemmas(conn, [form], 10) == {form: lemma}
    history.close()


@pytest.mark.parametrize(
    ("starts", "text"),
    [(b"", b"a\x1fb"), (b"\x00\x00\x00", b"a\x1fb"), (b"\x01\x00\x00\x00", b"a\x1fb"),
     (b"\x00\x00\x00\x00", b""), (b"\x00\x00\x00\x00", b"a\x1fb\x1ec\x1fd")],
)  # fmt: skip
def test_forms_that_are_not_stored_parts_are_refused(starts: bytes, text: bytes) -> None:
    assert lemma_forms._Forms.from_parts(starts, text) is None
