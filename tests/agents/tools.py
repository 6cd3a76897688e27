"""The cases' tools as typed Python functions, the way each framework's users declare them.

`make_tools(record)` returns fresh functions that append the arguments they ran with to
`record` and return `cases.tool_output`; their signatures match cases.py's JSON Schemas
(`read_text`'s optional parameters are what strict mode turns into required-with-default and
required-nullable).
"""

from __future__ import annotations

from typing import Callable

from cases import tool_output


def make_tools(record: list[dict]) -> dict[str, Callable[..., str]]:
    def read_file(path: str, limit: int, follow: bool) -> str:
        """Read the first `limit` lines of a file.

        Args:
            path: The file.
            limit: How many lines.
            follow: Whether to follow symlinks.
        """
        args = {"path": path, "limit": limit, "follow": follow}
        record.append(args)
        return tool_output("read_file", args)

    def read_many(paths: list[str], limit: int) -> str:
        """Read the first `limit` lines of several files.

        Args:
            paths: The files.
            limit: How many lines of each.
        """
        args = {"paths": paths, "limit": limit}
        record.append(args)
        return tool_output("read_many", args)

    def read_text(path: str, follow: bool, limit: int = 10, encoding: str | None = None) -> str:
        """Read a text file.

        Args:
            path: The file.
            follow: Whether to follow symlinks.
            limit: How many lines.
            encoding: The text encoding, if not UTF-8.
        """
        args = {"path": path, "follow": follow, "limit": limit, "encoding": encoding}
        record.append(args)
        return tool_output("read_text", args)

    return {"read_file": read_file, "read_many": read_many, "read_text": read_text}
