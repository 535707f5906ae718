from __future__ import annotations

from pathlib import Path

import pytest

from ai_memory.config import Config, resolve_data_dir
from ai_memory.config_render import render_default_config
from ai_memory.core.errors import ConfigError


def write_config(root: Path, text: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.toml").write_text(text)


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = Config.load(tmp_path / "d", {})
    assert config.data_dir == (tmp_path / "d").resolve()
    assert config.server.bind == "127.0.0.1:49374"
    assert config.db_path == config.data_dir / "db" / "memory.sqlite"


def test_file_and_nested_environment_override(tmp_path: Path) -> None:
    write_config(tmp_path, "[decay]\nlambda = 0.5\n[store]\nreaders = 2\n")
    config = Config.load(tmp_path, {"AI_MEMORY_DECAY__LAMBDA": "0.25"})
    assert config.decay.lambda_ == 0.25
    assert config.store.readers == 2


def test_unknown_key_names_key_and_file(tmp_path: Path) -> None:
    write_config(tmp_path, "[store]\nreaderz = 2\n")
    with pytest.raises(ConfigError) as info:
        Config.load(tmp_path, {})
    assert "store.readerz" in info.value.message
    assert str(tmp_path / "config.toml") in info.value.message


def test_wrong_type_and_out_of_range(tmp_path: Path) -> None:
    write_config(tmp_path, '[store]\nreaders = "many"\n')
    with pytest.raises(ConfigError, match=r"store\.readers"):
        Config.load(tmp_path, {})
    write_config(tmp_path, "[store]\nreaders = 0\n")
    with pytest.raises(ConfigError, match=r"store\.readers.*greater than or equal to 1"):
        Config.load(tmp_path, {})


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="AI_MEMORY_DECAY__LAMBDA"):
        Config.load(tmp_path, {"AI_MEMORY_DECAY__LAMBDA": "-1"})
    with pytest.raises(ConfigError, match="AI_MEMORY_NOPE"):
        Config.load(tmp_path, {"AI_MEMORY_NOPE": "1"})


def test_broken_toml_is_a_clear_error(tmp_path: Path) -> None:
    write_config(tmp_path, "[store\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Config.load(tmp_path, {})


def test_data_dir_resolution_order(tmp_path: Path) -> None:
    env = {"AI_MEMORY_DATA_DIR": str(tmp_path / "env"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert resolve_data_dir(tmp_path / "flag", env) == tmp_path / "flag"
    assert resolve_data_dir(None, env) == tmp_path / "env"
    assert resolve_data_dir(None, {"XDG_DATA_HOME": str(tmp_path / "xdg")}) == (
        tmp_path / "xdg" / "ai-memory"
    )
    assert resolve_data_dir(None, {"HOME": str(tmp_path)}) == (
        tmp_path / ".local" / "share" / "ai-memory"
    )
    assert resolve_data_dir("relative", {}).is_absolute()


def test_rendered_default_config_loads_to_the_defaults(tmp_path: Path) -> None:
    write_config(tmp_path, render_default_config())
    assert Config.load(tmp_path, {}).model_dump(exclude={"data_dir"}) == Config.load(
        tmp_path / "other", {}
    ).model_dump(exclude={"data_dir"})
    uncommented = "\n".join(
        line[2:] if line.startswith("# ") and " = " in line else line
        for line in render_default_config().splitlines()
    )
    write_config(tmp_path, uncommented)
    assert Config.load(tmp_path, {}).decay.lambda_ == 0.02
