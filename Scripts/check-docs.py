#!/usr/bin/env python3
"""Checks that every public symbol of the library modules has a doc comment.

Reads the symbol graphs `swift package dump-symbol-graph` writes and prints each public
symbol without a doc comment as `FILE:LINE: Module.Symbol`. Members that implement a
standard protocol requirement (listed below) are exempt: DocC documents them from the
protocol. Exits 1 when it finds any, 0 otherwise.

Usage: Scripts/check-docs.py SYMBOLGRAPH_FOLDER MODULE...
"""
import json
import os
import sys

# Requirements of standard-library and Foundation protocols, documented by the protocol.
INHERITED = {
    "description", "debugDescription", "hash(into:)", "==(_:_:)", "<(_:_:)", "rawValue",
    "init(rawValue:)", "init(from:)", "encode(to:)", "hashValue", "makeIterator()", "next()",
    "init(stringLiteral:)", "init(integerLiteral:)", "init(floatLiteral:)", "init(booleanLiteral:)",
    "init(arrayLiteral:)", "init(dictionaryLiteral:)", "init(nilLiteral:)", "id", "startIndex",
    "endIndex", "index(after:)", "index(before:)", "subscript(_:)", "errorDescription",
    "stringValue", "intValue", "init(stringValue:)", "init(intValue:)", "allCases",
    "makeAsyncIterator()", "Element", "AsyncIterator", "Iterator", "Index", "Indices",
    "SubSequence", "RawValue", "AllCases", "ID", "count", "isEmpty", "Failure",
}


def main() -> int:
    folder, modules = sys.argv[1], sys.argv[2:]
    missing = []
    for name in sorted(os.listdir(folder)):
        module = name.split(".symbols.json")[0].split("@")[0]
        if module not in modules or not name.endswith(".symbols.json"):
            continue
        with open(os.path.join(folder, name)) as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            path = symbol["pathComponents"]
            if path[-1] in INHERITED:
                continue
            if symbol.get("docComment", {}).get("lines"):
                continue
            location = symbol.get("location", {})
            file = location.get("uri", "?").replace("file://", "")
            file = os.path.relpath(file) if file.startswith("/") else file
            line = location.get("position", {}).get("line", -1) + 1
            missing.append(f"{file}:{line}: {module}.{'.'.join(path)} has no doc comment")
    for entry in sorted(set(missing)):
        print(entry)
    if missing:
        print(f"{len(set(missing))} public symbols without a doc comment", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
