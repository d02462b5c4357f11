#!/usr/bin/env python3
"""Writes revision metadata files in the store's own form, as seeds for the metadata
fuzzer: first revisions, children, merges and deletions, with device names that need
escaping, characters beyond ASCII, and a control character (which the writer's-form
reader leaves to the XML parser). Each file's revision id is the SHA-256 of its bytes
without the id's entry, after its generation, as the store makes it.

    Fuzz/metadata-seeds.py OUTPUT_FOLDER
"""
import datetime
import hashlib
import os
import sys
from xml.sax.saxutils import escape

HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
    '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
    '<plist version="1.0">\n<dict>\n'
)


def metadata(document, parents, device_id, device_name, deleted, fmt, millis, counter, content):
    lines = []
    if not deleted:
        lines.append("\t<key>ContentDigest</key>\n\t<string>%s</string>\n" % content)
    lines.append("\t<key>Deleted</key>\n\t<%s/>\n" % ("true" if deleted else "false"))
    lines.append("\t<key>DeviceID</key>\n\t<string>%s</string>\n" % escape(device_id))
    lines.append("\t<key>DeviceName</key>\n\t<string>%s</string>\n" % escape(device_name))
    lines.append("\t<key>DocumentUUID</key>\n\t<string>%s</string>\n" % document)
    lines.append("\t<key>FormatVersion</key>\n\t<integer>%d</integer>\n" % fmt)
    seconds = millis // 1000
    stamp = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines.append("\t<key>Modified</key>\n\t<date>%s</date>\n" % stamp)
    if parents:
        lines.append("\t<key>Parents</key>\n\t<array>\n")
        lines.extend("\t\t<string>%s</string>\n" % p for p in parents)
        lines.append("\t</array>\n")
    else:
        lines.append("\t<key>Parents</key>\n\t<array/>\n")
    tail = (
        "\t<key>TimestampCounter</key>\n\t<integer>%d</integer>\n"
        "\t<key>TimestampMilliseconds</key>\n\t<integer>%d</integer>\n</dict>\n</plist>\n" % (counter, millis)
    )
    without_id = (HEADER + "".join(lines) + tail).encode()
    generation = 1 + max((int(p.split("-")[0]) for p in parents), default=0)
    rid = "%d-%s" % (generation, hashlib.sha256(without_id).hexdigest())
    entry = "\t<key>RevisionID</key>\n\t<string>%s</string>\n" % rid
    return rid, (HEADER + "".join(lines) + entry + tail).encode()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    document = "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A4001"
    names = ["Laptop", "Zoë’s iPhone", "R&D <lab> 5 > 4", "日本語のマシン", "🦊 fox", "tab\there", ""]
    made = []
    for index, name in enumerate(names):
        parents = made[-2:] if index % 3 == 2 else made[-1:]
        deleted = index == 5
        content = hashlib.sha256(b"content %d" % index).hexdigest()
        rid, data = metadata(
            document, parents, "device-%d" % index, name, deleted, 3, 1795168800000 + index, index, content
        )
        made.append(rid)
        with open(os.path.join(out, "metadata-seed-%d.plist" % index), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
