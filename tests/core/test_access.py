"""API keys in the ``server`` config section (hashed, never echoed) and the access rules."""

from __future__ import annotations

import pytest

from memoweave.access import LOCAL, KeyRing, new_key, presented_key
from memoweave.config import MemoryConfig
from memoweave.config.server import hash_key
from memoweave.errors import ConfigError, Forbidden, Unauthorized

SECRET = "s3cret-key-for-tests-only"


def _server(*keys: dict) -> MemoryConfig:
    return MemoryConfig.from_dict({"server": {"keys": list(keys)}})


def test_plaintext_keys_are_hashed_and_not_kept() -> None:
    config = _server({"name": "app", "key": SECRET, "grant": {"user_id": ["alice"]}})
    (spec,) = config.server.keys
    assert spec.sha256 == hash_key(SECRET) and spec.key is None
    assert SECRET not in repr(config) and SECRET not in config.model_dump_json()


def test_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_KEY", SECRET)
    config = _server({"name": "app", "key": "${APP_KEY}", "role": "admin"})
    assert KeyRing.from_config(config.server).authenticate(SECRET).name == "app"


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "app", "key": "short-secret", "grant": {"user_id": ["a"]}},
        {"name": "app", "key": SECRET},  # a member needs a grant
        {"name": "app", "key": SECRET, "sha256": "0" * 64, "role": "admin"},
        {"name": "app", "sha256": "XYZ", "role": "admin"},
        {"name": "a b", "key": SECRET, "role": "admin"},
        {"name": "app", "key": SECRET, "grant": {"user_id": []}},
        {"name": "app", "key": SECRET, "grant": {"tenant": ["a"]}},
        {"name": "app", "key": SECRET, "role": "root"},
    ],
)
def test_bad_key_entries_are_config_errors_that_never_echo_the_key(entry: dict) -> None:
    with pytest.raises(ConfigError) as caught:
        _server(entry)
    assert "server.keys[0]" in caught.value.message
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value.details)


def test_duplicate_names_or_keys_are_refused_without_echoing() -> None:
    one = {"name": "a", "key": SECRET, "role": "admin"}
    for other in ({"name": "a", "key": SECRET + "x", "role": "admin"}, {**one, "name": "b"}):
        with pytest.raises(ConfigError) as caught:
            _server(one, other)
        assert SECRET not in str(caught.value) and SECRET not in repr(caught.value.details)


def test_keyring_authenticates_by_hash() -> None:
    ring = KeyRing.from_config(
        _server({"name": "app", "sha256": hash_key(SECRET), "grant": {"user_id": "*"}}).server
    )
    assert ring.authenticate(SECRET).grant == {"user_id": None}
    with pytest.raises(Unauthorized):
        ring.authenticate(None)
    with pytest.raises(Unauthorized) as caught:
        ring.authenticate(SECRET + "!")
    assert SECRET not in str(caught.value)
    assert KeyRing().authenticate(None) is LOCAL and SECRET not in repr(ring)


def test_presented_key_reads_bearer_or_x_api_key() -> None:
    assert presented_key({"authorization": "Bearer abc"}) == "abc"
    assert presented_key({"authorization": "bearer  abc "}) == "abc"
    assert presented_key({"x-api-key": "abc"}) == "abc"
    assert presented_key({"authorization": "Basic abc", "x-api-key": "k"}) is None
    assert presented_key({}) is None
    assert new_key() != new_key() and len(new_key()) > 40


def test_member_scope_must_lie_inside_the_grant() -> None:
    ring = KeyRing.from_config(
        _server(
            {"name": "app", "key": SECRET, "grant": {"user_id": ["alice", "bob"], "agent_id": "*"}}
        ).server
    )
    member = ring.authenticate(SECRET)
    member.check_scope({"user_id": "alice", "agent_id": "x"})
    member.check_scope({"user_id": "bob", "agent_id": "y", "run_id": "r"})
    for scope in ({"user_id": "carol", "agent_id": "x"}, {"user_id": "alice"}, {"agent_id": "x"}):
        with pytest.raises(Forbidden):
            member.check_scope(scope)
    assert member.can_see({"user_id": "alice", "agent_id": "x"})
    assert not member.can_see({"user_id": "alice"})
    assert not member.can_see({"user_id": "carol", "agent_id": "x"})
    with pytest.raises(Forbidden):
        member.require_admin("reset")
    assert member.pinned_scope() == {}
    LOCAL.require_admin("reset")
    LOCAL.check_scope({})


def test_pinned_scope_is_the_single_allowed_values() -> None:
    ring = KeyRing.from_config(
        _server(
            {"name": "a", "key": SECRET, "grant": {"user_id": ["alice"], "agent_id": "*"}}
        ).server
    )
    assert ring.authenticate(SECRET).pinned_scope() == {"user_id": "alice"}
