#!/usr/bin/env python3
"""Builds a corpus of hostile store folders: what rsync, unison, Syncthing, a shared
folder or a person can leave in a store.

    hostile-store.py BASE_STORE CANARY OUT_DIR [--combine SEED COUNT | --apply CASE STORE]

BASE_STORE is a clean store holding three documents titled "A", "B" and "C": A with a
pruned first revision (a tombstone), a superseded second one and a head; B and C with
one revision each. CANARY is a folder outside any store that the cases link into: no
command may create, change or remove anything in it. For each case, OUT_DIR/<case>/store
is a copy of BASE_STORE with the case applied, OUT_DIR/<case>/canary a copy of CANARY
that the case links into, and a manifest is printed on standard output as JSON: one
object per case with

    name      the case
    store     its store folder
    canary    its canary folder
    junk      paths (relative to the store) that `survey verify` must name
    victims   revision ids whose content the case itself damaged or hid (every other
              head's content must survive every command)
    refuse    true when the store itself is refused (a damaged Store.plist)
    note      true when what the case leaves is harmless and `verify` names it as a note
              (the store stays clean): a tombstone waiting for the revision that
              supersedes it

With --combine, the corpus is instead COUNT stores that each hold two to four cases at
once, drawn with Python's `random.Random(SEED)` from every case but those whose store is
refused: what several engines and people leave together. A combined case is named after
its cases joined by "+", its victims are theirs together, and its junk is empty: one case
can remove or hide what another left (a case that replaces a document folder removes the
junk another put in it), so what `verify` must name is not known case by case; the store
is marked "combined". A case that cannot be applied over the ones before it (what it
changes is no longer there) is left out of the name, and its victims kept. Each combined
store has a peer, another copy of BASE_STORE holding one to three cases ("peer": its
name, store, canary and victims): the replica it is synced with.

With --apply CASE STORE, the one case is applied to STORE (a copy of BASE_STORE that is
in use, a watched one) with CANARY as its canary, and nothing else is made (OUT_DIR is
not used; the manifest is not printed).

Forged revisions are written the way the store writes them: the revision id's digest is
the SHA-256 of the metadata property list without its RevisionID, which Python's
plistlib writes byte for byte as CoreFoundation does, so a forged revision verifies
unless the case means it not to.
"""

import datetime
import hashlib
import json
import os
import plistlib
import random
import shutil
import signal
import socket
import sys

BASE, CANARY, OUT = sys.argv[1:4]


def documents(store):
    """{title: (uuid, [metadata dicts sorted by generation], {id: tombstone dict})}"""
    found = {}
    root = os.path.join(store, "Documents")
    for uuid in sorted(os.listdir(root)):
        folder = os.path.join(root, uuid)
        revisions, tombstones, title = [], {}, None
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.endswith(".pruned"):
                with open(path, "rb") as f:
                    tombstones[name[: -len(".pruned")]] = plistlib.load(f)
            elif name.endswith(".survey"):
                with open(os.path.join(path, "DocumentMetadata.plist"), "rb") as f:
                    revisions.append(plistlib.load(f))
                with open(os.path.join(path, "Survey.plist"), "rb") as f:
                    title = plistlib.load(f).get("title", title)
        revisions.sort(key=lambda m: int(m["RevisionID"].split("-")[0]))
        found[title] = (uuid, revisions, tombstones)
    return found


def forge(metadata, **changes):
    """Metadata with `changes`, and a RevisionID whose digest matches (unless given)."""
    forged = dict(metadata)
    forged.pop("RevisionID", None)
    revision = changes.pop("RevisionID", None)
    forged.update(changes)
    # The store writes Modified from the timestamp (whole seconds, UTC).
    milliseconds = forged["TimestampMilliseconds"]
    if 0 <= milliseconds < 253402300800000:
        forged["Modified"] = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=milliseconds // 1000)
    if revision is None:
        generation = max([int(p.split("-")[0]) for p in forged["Parents"]] or [0]) + 1
        revision = "%d-%s" % (generation, hashlib.sha256(plistlib.dumps(forged)).hexdigest())
    forged["RevisionID"] = revision
    return forged


def write_plist(path, value):
    with open(path, "wb") as f:
        plistlib.dump(value, f)


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


docs = documents(BASE)
A_ID, A_REVS, A_TOMBS = docs["A"]
B_ID, B_REVS, _ = docs["B"]
C_ID, C_REVS, _ = docs["C"]
A_HEAD, A_OLD = A_REVS[-1], A_REVS[-2]
A_PRUNED = sorted(A_TOMBS)[0]
C_HEAD = C_REVS[-1]["RevisionID"]
B_HEAD = B_REVS[-1]["RevisionID"]


def a(*parts):
    return os.path.join("Documents", A_ID, *parts)


def c(*parts):
    return os.path.join("Documents", C_ID, *parts)


def package(store, doc, revision):
    return os.path.join(store, "Documents", doc, revision + ".survey")


CURRENT = {"canary": CANARY}


def canary(*parts):
    return os.path.join(CURRENT["canary"], *parts)


def a_child(**changes):
    """A valid revision of A that supersedes its head (another device's edit)."""
    values = dict(
        Parents=[A_HEAD["RevisionID"]], DeviceID="other-device", DeviceName="Other",
        TimestampMilliseconds=A_HEAD["TimestampMilliseconds"] + 1000)
    values.update(changes)
    return forge(A_HEAD, **values)


def add_package(store, doc, metadata, content_from=None):
    folder = package(store, doc, metadata["RevisionID"])
    os.mkdir(folder)
    write_plist(os.path.join(folder, "DocumentMetadata.plist"), metadata)
    if content_from is not None:
        shutil.copyfile(os.path.join(package(store, doc, content_from), "Survey.plist"), os.path.join(folder, "Survey.plist"))
    return folder


CASES = []


def case(name, junk=(), victims=(), refuse=False, note=False):
    def register(body):
        CASES.append((name, body, list(junk), list(victims), refuse, note))
        return body
    return register


# Links into the canary, at every level.
@case("pruned-package-links-to-folder", junk=[a(A_PRUNED + ".survey")], note=True)
def _(s):
    os.symlink(canary("folder"), os.path.join(s, a(A_PRUNED + ".survey")))


@case("pruned-package-relative-link", junk=[a(A_PRUNED + ".survey")], note=True)
def _(s):
    target = os.path.relpath(canary("folder"), os.path.join(s, a()))
    os.symlink(target, os.path.join(s, a(A_PRUNED + ".survey")))


@case("superseded-package-is-link", junk=[a(A_OLD["RevisionID"] + ".survey")], victims=[A_OLD["RevisionID"]])
def _(s):
    shutil.rmtree(os.path.join(s, a(A_OLD["RevisionID"] + ".survey")))
    os.symlink(canary("folder"), os.path.join(s, a(A_OLD["RevisionID"] + ".survey")))


@case("new-package-is-link", junk=[a(a_child()["RevisionID"] + ".survey")])
def _(s):
    os.symlink(canary("folder"), os.path.join(s, a(a_child()["RevisionID"] + ".survey")))


@case("content-links-to-secret", junk=[c(C_HEAD + ".survey", "Survey.plist")], victims=[C_HEAD])
def _(s):
    path = os.path.join(s, c(C_HEAD + ".survey", "Survey.plist"))
    shutil.copyfile(path, canary("secret.plist"))
    os.remove(path)
    os.symlink(canary("secret.plist"), path)


@case("content-links-to-dev-zero", junk=[c(C_HEAD + ".survey", "Survey.plist")], victims=[C_HEAD])
def _(s):
    path = os.path.join(s, c(C_HEAD + ".survey", "Survey.plist"))
    os.remove(path)
    os.symlink("/dev/zero", path)


@case("metadata-links-to-dev-zero", junk=[c(C_HEAD + ".survey")], victims=[C_HEAD])
def _(s):
    path = os.path.join(s, c(C_HEAD + ".survey", "DocumentMetadata.plist"))
    os.remove(path)
    os.symlink("/dev/zero", path)


@case("tombstone-links-to-dev-zero", junk=[a("%d-%s.pruned" % (9, "0" * 64))])
def _(s):
    os.symlink("/dev/zero", os.path.join(s, a("%d-%s.pruned" % (9, "0" * 64))))


@case("documents-is-link", junk=["Documents"], victims=["*"])
def _(s):
    shutil.move(os.path.join(s, "Documents"), canary("Documents"))
    os.symlink(canary("Documents"), os.path.join(s, "Documents"))


@case("document-folder-is-link", junk=[c()], victims=[C_HEAD])
def _(s):
    shutil.move(os.path.join(s, c()), canary(C_ID))
    os.symlink(canary(C_ID), os.path.join(s, c()))


@case("temporary-folder-is-link", junk=["Local.nosync/tmp"])
def _(s):
    shutil.rmtree(os.path.join(s, "Local.nosync/tmp"))
    os.symlink(canary("folder"), os.path.join(s, "Local.nosync/tmp"))


@case("locks-folder-is-link", junk=["Local.nosync/locks"])
def _(s):
    shutil.rmtree(os.path.join(s, "Local.nosync/locks"))
    os.symlink(canary("folder"), os.path.join(s, "Local.nosync/locks"))


@case("lock-file-is-dangling-link", junk=["Local.nosync/locks/writers.lock"])
def _(s):
    path = os.path.join(s, "Local.nosync/locks/writers.lock")
    if os.path.exists(path):
        os.remove(path)
    os.symlink(canary("created-through-a-link"), path)


@case("local-folder-is-link", junk=["Local.nosync"])
def _(s):
    shutil.move(os.path.join(s, "Local.nosync"), canary("Local.nosync"))
    os.symlink(canary("Local.nosync"), os.path.join(s, "Local.nosync"))


@case("pruning-folder-is-link", junk=["Local.nosync/pruning"])
def _(s):
    os.makedirs(canary("pruning"), exist_ok=True)
    write_bytes(canary("pruning", A_ID), b"")
    shutil.rmtree(os.path.join(s, "Local.nosync/pruning"), ignore_errors=True)
    os.symlink(canary("pruning"), os.path.join(s, "Local.nosync/pruning"))


@case("store-plist-is-link", junk=["Store.plist"], refuse=True)
def _(s):
    shutil.move(os.path.join(s, "Store.plist"), canary("Store.plist"))
    os.symlink(canary("Store.plist"), os.path.join(s, "Store.plist"))


@case("dangling-package-link", junk=[a("5-" + "1" * 64 + ".survey")])
def _(s):
    os.symlink(canary("nothing-here"), os.path.join(s, a("5-" + "1" * 64 + ".survey")))


@case("link-loop", junk=[a("5-" + "2" * 64 + ".survey")])
def _(s):
    os.symlink(a("5-" + "3" * 64 + ".survey"), os.path.join(s, a("5-" + "2" * 64 + ".survey")))
    os.symlink(a("5-" + "2" * 64 + ".survey"), os.path.join(s, a("5-" + "3" * 64 + ".survey")))


@case("link-inside-package", junk=[a(A_HEAD["RevisionID"] + ".survey", "extra")])
def _(s):
    os.symlink(canary("folder"), os.path.join(s, a(A_HEAD["RevisionID"] + ".survey", "extra")))


# FIFOs, sockets, devices where files belong.
@case("content-is-fifo", junk=[c(C_HEAD + ".survey", "Survey.plist")], victims=[C_HEAD])
def _(s):
    path = os.path.join(s, c(C_HEAD + ".survey", "Survey.plist"))
    os.remove(path)
    os.mkfifo(path)


@case("metadata-is-fifo", junk=[c(C_HEAD + ".survey")], victims=[C_HEAD])
def _(s):
    path = os.path.join(s, c(C_HEAD + ".survey", "DocumentMetadata.plist"))
    os.remove(path)
    os.mkfifo(path)


@case("tombstone-is-fifo", junk=[a(A_HEAD["RevisionID"] + ".pruned")])
def _(s):
    os.mkfifo(os.path.join(s, a(A_HEAD["RevisionID"] + ".pruned")))


@case("store-plist-is-fifo", junk=["Store.plist"], refuse=True)
def _(s):
    os.remove(os.path.join(s, "Store.plist"))
    os.mkfifo(os.path.join(s, "Store.plist"))


@case("socket-in-document-folder", junk=[a("x.pruned")])
def _(s):
    # Bound from inside the folder: a socket's path is limited to 107 bytes.
    here = os.getcwd()
    os.chdir(os.path.join(s, a()))
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind("x.pruned")
        server.close()
    finally:
        os.chdir(here)


@case("lock-file-is-fifo", junk=["Local.nosync/locks/writers.lock"])
def _(s):
    path = os.path.join(s, "Local.nosync/locks/writers.lock")
    if os.path.exists(path):
        os.remove(path)
    os.mkfifo(path)


# Tombstones that must not cost a head its content.
@case("stray-tombstone-for-head", junk=[a(A_HEAD["RevisionID"] + ".pruned")], note=True)
def _(s):
    write_plist(os.path.join(s, a(A_HEAD["RevisionID"] + ".pruned")), A_HEAD)


@case("tombstones-before-their-revision", junk=[a(A_HEAD["RevisionID"] + ".pruned")], note=True)
def _(s):
    # Another replica saved a child of the head and pruned the head; its tombstones
    # arrived, the child did not (an interrupted rsync).
    write_plist(os.path.join(s, a(A_HEAD["RevisionID"] + ".pruned")), A_HEAD)
    write_plist(os.path.join(s, a(A_OLD["RevisionID"] + ".pruned")), A_OLD)


@case("tombstones-and-half-a-package", junk=[a(a_child()["RevisionID"] + ".survey")])
def _(s):
    write_plist(os.path.join(s, a(A_HEAD["RevisionID"] + ".pruned")), A_HEAD)
    folder = os.path.join(s, a(a_child()["RevisionID"] + ".survey"))
    os.mkdir(folder)
    write_plist(os.path.join(folder, "DocumentMetadata.plist"), a_child())


@case("tombstone-with-damaged-successor", junk=[a(a_child()["RevisionID"] + ".survey", "Survey.plist")])
def _(s):
    # The child arrived, but its content is damaged: the head it supersedes keeps its content.
    write_plist(os.path.join(s, a(A_HEAD["RevisionID"] + ".pruned")), A_HEAD)
    folder = add_package(s, A_ID, a_child(), content_from=A_HEAD["RevisionID"])
    with open(os.path.join(folder, "Survey.plist"), "r+b") as f:
        f.seek(40)
        f.write(b"#")


@case("garbage-tombstone", junk=[a("garbage.pruned")])
def _(s):
    write_bytes(os.path.join(s, a("garbage.pruned")), b"not a property list")


@case("garbage-tombstone-with-revision-name", junk=[a(A_HEAD["RevisionID"] + ".pruned")])
def _(s):
    write_bytes(os.path.join(s, a(A_HEAD["RevisionID"] + ".pruned")), b"<plist><dict><key>x</key></dict></plist>")


@case("tombstone-of-another-document", junk=[a(B_HEAD + ".pruned")])
def _(s):
    write_plist(os.path.join(s, a(B_HEAD + ".pruned")), B_REVS[-1])


@case("folder-as-tombstone", junk=[a(A_OLD["RevisionID"] + ".pruned")])
def _(s):
    os.mkdir(os.path.join(s, a(A_OLD["RevisionID"] + ".pruned")))


# Forged and extreme metadata.
@case("forged-id-unwritable-device-name", junk=[a("4-" + hashlib.sha256(b"").hexdigest() + ".survey")])
def _(s):
    forged = forge(a_child(), DeviceName="a\rb", RevisionID="4-" + hashlib.sha256(b"").hexdigest())
    add_package(s, A_ID, forged, content_from=A_HEAD["RevisionID"])


def own_bytes_child():
    """A child of A whose metadata holds the document id in lower case, with an id whose
    digest is that of its own bytes: not the bytes the store writes (those have the id in
    upper case), so it must not verify, although the XML parser reads the same values."""
    body = dict(a_child())
    body.pop("RevisionID")
    data = plistlib.dumps(body).replace(
        body["DocumentUUID"].encode(), body["DocumentUUID"].lower().encode())
    generation = max(int(p.split("-")[0]) for p in body["Parents"]) + 1
    revision = "%d-%s" % (generation, hashlib.sha256(data).hexdigest())
    entry = b"\t<key>RevisionID</key>\n\t<string>%s</string>\n" % revision.encode()
    data = data.replace(b"\t<key>TimestampCounter</key>", entry + b"\t<key>TimestampCounter</key>")
    return revision, data


@case("forged-id-over-own-bytes", junk=[a(own_bytes_child()[0] + ".survey")])
def _(s):
    revision, data = own_bytes_child()
    folder = package(s, A_ID, revision)
    os.mkdir(folder)
    write_bytes(os.path.join(folder, "DocumentMetadata.plist"), data)
    shutil.copyfile(os.path.join(package(s, A_ID, A_HEAD["RevisionID"]), "Survey.plist"), os.path.join(folder, "Survey.plist"))


@case("generation-at-int-max", junk=[a("9223372036854775807-" + "a" * 64 + ".survey")])
def _(s):
    forged = forge(a_child(), RevisionID="9223372036854775807-" + "a" * 64)
    os.mkdir(os.path.join(s, a(forged["RevisionID"] + ".survey")))
    write_plist(os.path.join(s, a(forged["RevisionID"] + ".survey", "DocumentMetadata.plist")), forged)


@case("generation-not-parent-plus-one", junk=[a("9-")])
def _(s):
    child = a_child()
    body = dict(child)
    body.pop("RevisionID")
    forged = dict(body, RevisionID="9-" + hashlib.sha256(plistlib.dumps(body)).hexdigest())
    add_package(s, A_ID, forged, content_from=A_HEAD["RevisionID"])


@case("counter-at-int-max", junk=[a(a_child(TimestampCounter=2**63 - 1)["RevisionID"] + ".survey")])
def _(s):
    add_package(s, A_ID, a_child(TimestampCounter=2**63 - 1), content_from=A_HEAD["RevisionID"])


@case("milliseconds-huge", junk=[a(a_child(TimestampMilliseconds=2**62)["RevisionID"] + ".survey")])
def _(s):
    add_package(s, A_ID, a_child(TimestampMilliseconds=2**62), content_from=A_HEAD["RevisionID"])


@case("format-version-negative", junk=[a(a_child(FormatVersion=-1)["RevisionID"] + ".survey")])
def _(s):
    add_package(s, A_ID, a_child(FormatVersion=-1), content_from=A_HEAD["RevisionID"])


@case("parent-cycle", junk=[a("7-")])
def _(s):
    # Two revisions naming each other: at most one can have the right generation.
    first = forge(a_child(), Parents=["7-" + "c" * 64], RevisionID="8-" + "d" * 64)
    second = forge(a_child(), Parents=["8-" + "d" * 64], RevisionID="7-" + "c" * 64)
    add_package(s, A_ID, first, content_from=A_HEAD["RevisionID"])
    add_package(s, A_ID, second, content_from=A_HEAD["RevisionID"])


@case("huge-metadata", junk=[c(C_HEAD + ".survey")], victims=[C_HEAD])
def _(s):
    with open(os.path.join(s, c(C_HEAD + ".survey", "DocumentMetadata.plist")), "ab") as f:
        f.write(b"<!-- " + b"x" * (2 << 20) + b" -->")


@case("garbage-content-under-valid-metadata", junk=[a(a_child(ContentDigest=hashlib.sha256(b"garbage").hexdigest())["RevisionID"])])
def _(s):
    child = a_child(ContentDigest=hashlib.sha256(b"garbage").hexdigest())
    folder = add_package(s, A_ID, child)
    write_bytes(os.path.join(folder, "Survey.plist"), b"garbage")


# Foreign things, case variants, files where folders belong and back.
@case("package-of-another-document", junk=[a(B_HEAD + ".survey")])
def _(s):
    shutil.copytree(package(s, B_ID, B_HEAD), os.path.join(s, a(B_HEAD + ".survey")))


@case("upper-case-document-folder", junk=["Documents/" + C_ID.upper()])
def _(s):
    shutil.copytree(os.path.join(s, c()), os.path.join(s, "Documents", C_ID.upper()))


@case("upper-case-package", junk=[a(A_HEAD["RevisionID"].upper() + ".survey")])
def _(s):
    shutil.copytree(os.path.join(s, a(A_HEAD["RevisionID"] + ".survey")), os.path.join(s, a(A_HEAD["RevisionID"].upper() + ".survey")))


@case("file-named-like-a-document", junk=["Documents/12345678-1234-4234-8234-123456789abc"])
def _(s):
    write_bytes(os.path.join(s, "Documents/12345678-1234-4234-8234-123456789abc"), b"stray")


@case("file-named-like-a-package", junk=[a("6-" + "e" * 64 + ".survey")])
def _(s):
    write_bytes(os.path.join(s, a("6-" + "e" * 64 + ".survey")), b"stray")


@case("folder-where-content-belongs", junk=[c(C_HEAD + ".survey", "Survey.plist")], victims=[C_HEAD])
def _(s):
    path = os.path.join(s, c(C_HEAD + ".survey", "Survey.plist"))
    os.remove(path)
    os.mkdir(path)


@case("full-folder-where-content-belongs", junk=[c(C_HEAD + ".survey", "Survey.plist")], victims=[C_HEAD])
def _(s):
    path = os.path.join(s, c(C_HEAD + ".survey", "Survey.plist"))
    os.remove(path)
    os.mkdir(path)
    write_bytes(os.path.join(path, "notes.txt"), b"someone's notes")


# Something else where a document's folder or a revision's package belongs (a sync
# removes a FIFO there and copies the revisions in; a regular file stays).
@case("document-folder-is-fifo", junk=[c()], victims=[C_HEAD])
def _(s):
    shutil.rmtree(os.path.join(s, c()))
    os.mkfifo(os.path.join(s, c()))


@case("document-folder-is-file", junk=[c()], victims=[C_HEAD])
def _(s):
    shutil.rmtree(os.path.join(s, c()))
    write_bytes(os.path.join(s, c()), b"a file where a folder belongs")


@case("package-is-fifo", junk=[c(C_HEAD + ".survey")], victims=[C_HEAD])
def _(s):
    shutil.rmtree(os.path.join(s, c(C_HEAD + ".survey")))
    os.mkfifo(os.path.join(s, c(C_HEAD + ".survey")))


@case("package-is-file", junk=[c(C_HEAD + ".survey")], victims=[C_HEAD])
def _(s):
    shutil.rmtree(os.path.join(s, c(C_HEAD + ".survey")))
    write_bytes(os.path.join(s, c(C_HEAD + ".survey")), b"a file where a package belongs")


@case("documents-is-a-file", junk=["Documents"], victims=["*"])
def _(s):
    shutil.move(os.path.join(s, "Documents"), os.path.join(os.path.dirname(s), "Documents-aside"))
    write_bytes(os.path.join(s, "Documents"), b"not a folder")


@case("unexpected-file-in-document-folder", junk=[a("notes.txt")])
def _(s):
    write_bytes(os.path.join(s, a("notes.txt")), b"hello")


# Metadata and a tombstone damaged in place (regular files that do not verify): skipped,
# and repaired by sync from a replica that holds the revision whole, or the tombstone.
@case("metadata-garbled", junk=[c(C_HEAD + ".survey")])
def _(s):
    write_bytes(os.path.join(s, c(C_HEAD + ".survey", "DocumentMetadata.plist")), b"<?xml version=\"1.0\"?>\n<plist")


@case("tombstone-torn", junk=[a(A_PRUNED + ".pruned")])
def _(s):
    path = os.path.join(s, a(A_PRUNED + ".pruned"))
    with open(path, "rb") as f:
        data = f.read()
    write_bytes(path, data[: len(data) // 2])


@case("metadata-of-another-revision", junk=[c(C_HEAD + ".survey")])
def _(s):
    shutil.copyfile(os.path.join(package(s, B_ID, B_HEAD), "DocumentMetadata.plist"),
                    os.path.join(s, c(C_HEAD + ".survey", "DocumentMetadata.plist")))


# Hidden entries: what the system and sync engines leave (notes, never part of the store).
LEFTOVERS = [
    "Documents/.DS_Store", a(".DS_Store"), a("._" + A_HEAD["RevisionID"] + ".survey"),
    a("._" + A_PRUNED + ".pruned"), a(A_HEAD["RevisionID"] + ".survey", ".DS_Store"),
    a(A_HEAD["RevisionID"] + ".survey", "._Survey.plist"),
    a(A_HEAD["RevisionID"] + ".survey", ".Survey.plist.Xy12Ab"),
    a(A_HEAD["RevisionID"] + ".survey", ".syncthing.Survey.plist.tmp"),
    a(A_HEAD["RevisionID"] + ".survey", ".unison.Survey.plist.2c0f.unison.tmp"),
    a(A_HEAD["RevisionID"] + ".survey", ".rsync-partial"),
]


@case("finder-and-engine-leftovers", junk=LEFTOVERS, note=True)
def _(s):
    for path in LEFTOVERS[:-1]:
        write_bytes(os.path.join(s, path), b"\x00\x05\x16\x07 left by the system or an engine")
    os.mkdir(os.path.join(s, LEFTOVERS[-1]))
    shutil.copyfile(os.path.join(s, a(A_HEAD["RevisionID"] + ".survey", "Survey.plist")),
                    os.path.join(s, LEFTOVERS[-1], "Survey.plist"))


@case("hidden-copy-of-a-package", junk=[a("." + a_child()["RevisionID"] + ".survey")], note=True)
def _(s):
    # A complete, verifying revision under a hidden name is not a revision: A's head
    # stays the winner.
    folder = add_package(s, A_ID, a_child(), content_from=A_HEAD["RevisionID"])
    os.rename(folder, os.path.join(os.path.dirname(folder), "." + os.path.basename(folder)))


HIDDEN_LINKS = ["Documents/.link", a(".link"), a(A_HEAD["RevisionID"] + ".survey", ".Survey.plist")]


@case("hidden-links-to-canary", junk=HIDDEN_LINKS, note=True)
def _(s):
    os.symlink(canary("folder"), os.path.join(s, HIDDEN_LINKS[0]))
    os.symlink(canary("folder"), os.path.join(s, HIDDEN_LINKS[1]))
    shutil.copyfile(os.path.join(s, c(C_HEAD + ".survey", "Survey.plist")), canary("secret.plist"))
    os.symlink(canary("secret.plist"), os.path.join(s, HIDDEN_LINKS[2]))


@case("hidden-fifo-in-package", junk=[a(A_HEAD["RevisionID"] + ".survey", ".Survey.plist.tmp")], note=True)
def _(s):
    os.mkfifo(os.path.join(s, a(A_HEAD["RevisionID"] + ".survey", ".Survey.plist.tmp")))


# The summary cache (local state, never trusted: ignored and rebuilt, never followed).
@case("summary-cache-garbage")
def _(s):
    write_bytes(os.path.join(s, "Local.nosync/summaries.cache"), b"SurveyStore summary cache\n" + bytes(range(256)) * 64)


@case("summary-cache-is-link")
def _(s):
    path = os.path.join(s, "Local.nosync/summaries.cache")
    if os.path.lexists(path):
        os.remove(path)
    os.symlink(canary("summaries.cache"), path)


@case("summary-cache-is-fifo")
def _(s):
    path = os.path.join(s, "Local.nosync/summaries.cache")
    if os.path.lexists(path):
        os.remove(path)
    os.mkfifo(path)


@case("summary-cache-is-folder")
def _(s):
    path = os.path.join(s, "Local.nosync/summaries.cache")
    if os.path.lexists(path):
        os.remove(path)
    os.mkdir(path)


# The layout file.
@case("store-plist-newer-layout", junk=[], refuse=False)
def _(s):
    write_plist(os.path.join(s, "Store.plist"), {"StoreLayoutVersion": 2})


@case("store-plist-garbage", junk=["Store.plist"], refuse=True)
def _(s):
    write_bytes(os.path.join(s, "Store.plist"), b"garbage")


@case("store-plist-is-folder", junk=["Store.plist"], refuse=True)
def _(s):
    os.remove(os.path.join(s, "Store.plist"))
    os.mkdir(os.path.join(s, "Store.plist"))


def on_alarm(signum, frame):
    raise TimeoutError("the case waited too long")


signal.signal(signal.SIGALRM, on_alarm)
# The alarm must reach the script however it was started: started by the test suite,
# Python was seen to begin with most signals blocked, SIGALRM among them.
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGALRM])


def all_victims(victims):
    if victims == ["*"]:
        return [m["RevisionID"] for _, revs, _ in docs.values() for m in revs]
    return victims


def prepare(name):
    """A copy of the base store and of the canary for the case `name`."""
    store = os.path.join(OUT, name, "store")
    CURRENT["canary"] = os.path.join(OUT, name, "canary")
    shutil.copytree(BASE, store, symlinks=True)
    shutil.copytree(CANARY, CURRENT["canary"], symlinks=True)
    return store


def combined(folder, chosen):
    """A copy of the base store in OUT/folder with the cases `chosen` applied in turn:
    (store, canary, the names of the cases applied, their victims)."""
    store = prepare(folder)
    applied, victims = [], set()
    for name, body, _, case_victims, _, _ in chosen:
        victims.update(all_victims(case_victims))
        # A case writing where one before it left a FIFO would wait for a reader.
        signal.alarm(5)
        try:
            body(store)
            applied.append(name)
        except OSError:
            pass
        finally:
            signal.alarm(0)
    return store, CURRENT["canary"], applied, victims


manifest = []
if len(sys.argv) == 7 and sys.argv[4] == "--combine":
    chooser = random.Random(int(sys.argv[5]))
    candidates = [c for c in CASES if not c[4]]
    for number in range(int(sys.argv[6])):
        store, canary_folder, applied, victims = combined(
            "combined-%d" % number, chooser.sample(candidates, chooser.randint(2, 4)))
        peer, peer_canary, peer_applied, peer_victims = combined(
            "combined-%d-peer" % number, chooser.sample(candidates, chooser.randint(1, 3)))
        manifest.append(
            {"name": "+".join(applied), "store": store, "canary": canary_folder, "junk": [],
             "victims": sorted(victims), "refuse": False, "note": False, "combined": True,
             "peer": {"name": "+".join(peer_applied), "store": peer, "canary": peer_canary,
                      "victims": sorted(peer_victims)}})
elif len(sys.argv) == 7 and sys.argv[4] == "--apply":
    # One case applied to a store that is in use (a watched one), as an engine would.
    name, store, CURRENT["canary"] = sys.argv[5], sys.argv[6], CANARY
    [body] = [c[1] for c in CASES if c[0] == name]
    body(store)
    sys.exit(0)
elif len(sys.argv) == 4:
    for name, body, junk, victims, refuse, note in CASES:
        store = prepare(name)
        body(store)
        manifest.append(
            {"name": name, "store": store, "canary": CURRENT["canary"], "junk": junk, "victims": all_victims(victims),
             "refuse": refuse, "note": note, "combined": False})
else:
    sys.exit("usage: hostile-store.py BASE_STORE CANARY OUT_DIR [--combine SEED COUNT | --apply CASE STORE]")
json.dump(manifest, sys.stdout, indent=1)
