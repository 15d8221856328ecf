#!/usr/bin/env python3
"""Prints each TOML file's value tree as tomllib (Python 3.11+) reads it, in the canonical form
Tests/TOMLTests/CanonicalForm.swift writes for our parser, so the two can be compared as text.

Usage: tomllib-canonical.py FILE...  -> one line per file: FILE, a tab, then the tree as JSON
(sorted keys, no spaces) or {"error":MESSAGE} when tomllib rejects the file.

Canonical form: a table is an object keyed by the hex of each key's UTF-8 bytes; an array is a
list; a scalar is a string "TYPE:VALUE": s:HEX-UTF-8, i:DECIMAL, f:HEX-IEEE-754-BITS (or f:nan),
b:true|false, odt:/ldt:/ld:/lt: an ISO date-time with 6 fraction digits (+HH:MM offset for odt).
"""

import datetime
import json
import struct
import sys
import tomllib


def canonical(value):
    if isinstance(value, dict):
        return {key.encode().hex(): canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, bool):
        return "b:" + ("true" if value else "false")
    if isinstance(value, int):
        return "i:" + str(value)
    if isinstance(value, float):
        return "f:nan" if value != value else "f:" + struct.pack(">d", value).hex()
    if isinstance(value, str):
        return "s:" + value.encode().hex()
    if isinstance(value, datetime.datetime):
        text = f"{date(value)}T{time(value)}"
        if value.tzinfo is None:
            return "ldt:" + text
        minutes = int(value.utcoffset().total_seconds()) // 60
        sign = "-" if minutes < 0 else "+"
        return f"odt:{text}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    if isinstance(value, datetime.date):
        return "ld:" + date(value)
    if isinstance(value, datetime.time):
        return "lt:" + time(value)
    raise TypeError(type(value))


def date(value):
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def time(value):
    return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"


def main():
    for path in sys.argv[1:]:
        with open(path, "rb") as file:
            data = file.read()
        try:
            tree = canonical(tomllib.loads(data.decode("utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError, RecursionError) as error:
            tree = {"error": str(error)}
        print(path, json.dumps(tree, sort_keys=True, separators=(",", ":")), sep="\t")


main()
