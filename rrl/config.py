"""Where the ``rrl`` command keeps the site's address and its token.

One JSON file, ``$XDG_CONFIG_HOME/rrl/config.json`` (``~/.config/rrl/config.json`` when
that is unset; ``%APPDATA%\\rrl\\config.json`` on Windows): ``{"url": the last site
logged in to, "tokens": {site: token}}``. It holds secrets, so it is written readable by
its owner only (0600, the folder 0700), through a temporary file renamed over the old one
so that a crash never leaves half a file. ``RRL_URL`` and ``RRL_TOKEN`` override it.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Settings", "config_path", "load", "resolve", "save_token"]


def config_path(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if sys.platform == "win32" and env.get("APPDATA"):
        base = Path(env["APPDATA"])
    elif env.get("XDG_CONFIG_HOME"):
        base = Path(env["XDG_CONFIG_HOME"])
    else:
        base = Path(env.get("HOME") or Path.home()) / ".config"
    return base / "rrl" / "config.json"


def load(path: Path) -> dict:
    """The stored configuration (empty if there is none); a broken file is a ``ValueError``
    naming it, never silently replaced."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error}); fix or delete it") from error
    if not isinstance(data, dict) or not isinstance(data.get("tokens", {}), dict):
        raise ValueError(f"{path}: not an rrl configuration; fix or delete it")
    return data


def save_token(path: Path, url: str, token: str) -> None:
    """Keep ``token`` for ``url`` (and ``url`` as the default site), owner-only."""
    data = load(path)
    data["url"] = url
    data.setdefault("tokens", {})[url] = token
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.chmod(partial, 0o600)  # O_CREAT's mode is cut by the umask; this is not
    os.replace(partial, path)


@dataclass(frozen=True)
class Settings:
    url: str | None
    token: str | None


def resolve(url: str | None, path: Path, env: dict[str, str] | None = None) -> Settings:
    """The site and token to use: ``--url``, else ``RRL_URL``, else the stored default;
    ``RRL_TOKEN``, else the token stored for that site."""
    env = os.environ if env is None else env
    data = load(path)
    site = (url or env.get("RRL_URL") or data.get("url") or "").rstrip("/") or None
    if site is not None and not site.lower().startswith(("http://", "https://")):
        raise ValueError(f"the site's address starts with http:// or https://, not {site!r}")
    token = env.get("RRL_TOKEN") or (data.get("tokens", {}).get(site) if site else None)
    return Settings(site, token or None)
