"""The ``rrl`` command's configuration file: where it lives, owner-only permissions, what
overrides it, and a broken file named rather than replaced."""

from __future__ import annotations

import json
import stat

import pytest

from rrl import config


def test_the_file_lives_in_the_xdg_config_home_or_under_home(tmp_path):
    assert (
        config.config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "rrl" / "config.json"
    )
    home = {"HOME": str(tmp_path)}
    assert config.config_path(home) == tmp_path / ".config" / "rrl" / "config.json"


def test_a_saved_token_is_owner_only_and_kept_per_site(tmp_path):
    path = tmp_path / "cfg" / "rrl" / "config.json"
    config.save_token(path, "https://a.example.org", "rrl_a")
    config.save_token(path, "https://b.example.org", "rrl_b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    data = json.loads(path.read_text())
    assert data == {
        "url": "https://b.example.org",
        "tokens": {"https://a.example.org": "rrl_a", "https://b.example.org": "rrl_b"},
    }
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]  # no partial file left


def test_an_existing_file_with_loose_permissions_is_tightened(tmp_path):
    path = tmp_path / "rrl" / "config.json"
    path.parent.mkdir()
    path.write_text("{}")
    path.chmod(0o644)
    config.save_token(path, "https://a.example.org", "rrl_a")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_url_and_token_come_from_the_flag_the_environment_then_the_file(tmp_path):
    path = tmp_path / "config.json"
    config.save_token(path, "https://a.example.org", "rrl_a")
    assert config.resolve(None, path, {}) == config.Settings("https://a.example.org", "rrl_a")
    # another site: its own token, none stored
    other = config.resolve("https://b.example.org/", path, {})
    assert other == config.Settings("https://b.example.org", None)
    env = {"RRL_URL": "https://a.example.org", "RRL_TOKEN": "rrl_env"}
    assert config.resolve(None, path, env) == config.Settings("https://a.example.org", "rrl_env")
    assert config.resolve(None, tmp_path / "none.json", {}) == config.Settings(None, None)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"tokens": 3}'])
def test_a_broken_file_is_named_not_replaced(tmp_path, content):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=str(path)):
        config.resolve(None, path, {})
    with pytest.raises(ValueError):
        config.save_token(path, "https://a.example.org", "rrl_a")
    assert path.read_text() == content
