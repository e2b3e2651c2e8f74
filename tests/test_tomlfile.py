"""latitude.tomlfile, the reader every TOML input (machine files, and the tables other readers
add to them) goes through: file problems and value types as one line with file:line."""

from __future__ import annotations

import pytest
from latitude import tomlfile
from latitude.errors import InputError


def test_read_names_the_line(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text("[loggps]\nL = 3\nL = 4\n")
    with pytest.raises(InputError, match=r"m\.toml:3: not valid TOML"):
        tomlfile.read(f)
    f.write_bytes(b"L = 3\n# \xff\n")
    with pytest.raises(InputError, match=r"m\.toml:2: not UTF-8"):
        tomlfile.read(f)
    f.write_text("[loggps]\nL = '3us'\ng = " + "7" * 65537 + "\n")  # tomllib's own ValueError (a fuzz finding)
    with pytest.raises(InputError, match=r"m\.toml:3: a number of more than 4300 digits"):
        tomlfile.read(f)
    f.write_text("[loggps]\nL = 3\n\n[topology]\nkind = 'torus'\n")
    data, text = tomlfile.read(f)
    assert data["loggps"]["L"] == 3
    assert tomlfile.where(str(f), text, "kind", "topology") == f"{f}:5"
    assert tomlfile.where(str(f), text, "L", "loggps") == f"{f}:2"


def test_values_keep_their_types():
    assert tomlfile.number(3, "f:1", "a time") == 3
    assert tomlfile.number("3us", "f:1", "a time") == "3us"
    for wrong, shown in ((True, "true"), ([1], "an array"), ({"a": 1}, "a table")):
        with pytest.raises(InputError, match=f"f:1: expected a time, got {shown}"):
            tomlfile.number(wrong, "f:1", "a time")
    assert tomlfile.boolean(False, "f:2", "true or false") is False
    with pytest.raises(InputError, match="got 1"):
        tomlfile.boolean(1, "f:2", "true or false")
    with pytest.raises(InputError, match="a string"):
        tomlfile.string(1.5, "f:3", "a name")


def test_unknown_tables(tmp_path):
    text = "[loggps]\nL = 3\n[[links]]\nbw = 1\n[sect]\nx = 1\n"
    data = {"loggps": {"L": 3}, "links": [{"bw": 1}], "sect": {"x": 1}}
    with pytest.raises(InputError, match=r"m:3: unknown table \[links\]"):
        tomlfile.check_tables(data, "m", text, ("loggps",))
    with pytest.raises(InputError, match=r"m:5: unknown table \[sect\] \(expected \[loggps\], \[links\]\)"):
        tomlfile.check_tables(data, "m", text, ("loggps", "links"))
    tomlfile.check_tables(data, "m", text, ("loggps", "links", "sect"))
