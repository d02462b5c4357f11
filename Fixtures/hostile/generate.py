#!/usr/bin/env python3
# Writes the hostile corpus and expected.json (the expected lines are then filled in
# from a reviewed run of `survey plist lint`). Run from this folder.
import os
H = '<?xml version="1.0" encoding="UTF-8"?>\n'
D = '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
def plist(body, header=H + D):
    return (header + '<plist version="1.0">\n' + body + '\n</plist>\n').encode()
cases = []
def case(name, data, what, fragment):
    if isinstance(data, str): data = data.encode()
    cases.append((name, data, what, fragment))

case("internal-entity", H + '<!DOCTYPE plist [\n<!ENTITY name "value">\n]>\n<plist version="1.0">\n<string>&name;</string>\n</plist>\n',
     "an internal entity declaration", "entity declaration 'name' is not allowed")
case("external-entity-file", H + '<!DOCTYPE plist [\n<!ENTITY secret SYSTEM "file:///etc/passwd">\n]>\n<plist version="1.0">\n<string>&secret;</string>\n</plist>\n',
     "an external entity pointing at /etc/passwd (nothing is read)", "entity declaration 'secret' is not allowed")
case("external-entity-http", H + '<!DOCTYPE plist [\n<!ENTITY remote SYSTEM "http://127.0.0.1:9/entity">\n]>\n<plist version="1.0">\n<string>&remote;</string>\n</plist>\n',
     "an external entity on the network (nothing is fetched)", "entity declaration 'remote' is not allowed")
case("parameter-entity", H + '<!DOCTYPE plist [\n<!ENTITY % param SYSTEM "file:///etc/hostname">\n%param;\n]>\n<plist version="1.0">\n<string>x</string>\n</plist>\n',
     "a parameter entity that would pull in a file", "entity declaration 'param' is not allowed")
lol = '<!ENTITY lol "lol">\n' + ''.join('<!ENTITY lol%d "%s">\n' % (i, ('&lol%s;' % ('' if i == 1 else i - 1)) * 10) for i in range(1, 10))
case("billion-laughs", H + '<!DOCTYPE plist [\n' + lol + ']>\n<plist version="1.0">\n<string>&lol9;</string>\n</plist>\n',
     "the billion laughs expansion bomb", "entity declaration 'lol' is not allowed")
case("quadratic-blowup", H + '<!DOCTYPE plist [\n<!ENTITY big "' + 'x' * 50000 + '">\n]>\n<plist version="1.0">\n<string>' + '&big;' * 2000 + '</string>\n</plist>\n',
     "one large entity referenced many times", "entity declaration 'big' is not allowed")
case("undefined-entity", plist('<string>&undefined;</string>'), "a reference to an undefined entity", "Entity 'undefined' not defined")
case("undefined-entity-no-doctype", H + '<plist version="1.0"><string>a &nbsp; b</string></plist>\n', "an HTML entity without any DOCTYPE", "Entity 'nbsp' not defined")
case("element-declaration", H + '<!DOCTYPE plist [\n<!ELEMENT plist ANY>\n]>\n<plist version="1.0"><string>x</string></plist>\n',
     "an ELEMENT declaration in the internal subset", "element declaration 'plist' is not allowed")
case("attlist-declaration", H + '<!DOCTYPE plist [\n<!ATTLIST plist version CDATA "9.9">\n]>\n<plist><string>x</string></plist>\n',
     "an ATTLIST declaration (default attribute values)", "attribute list declaration 'plist' is not allowed")
case("doctype-dev-zero", H + '<!DOCTYPE plist SYSTEM "file:///dev/zero">\n<plist version="1.0"><string>&x;</string></plist>\n',
     "an external DTD on /dev/zero (never loaded) and an entity it would define", "Entity 'x' not defined")
case("wrong-doctype", H + '<!DOCTYPE html>\n<plist version="1.0"><string>x</string></plist>\n', "a DOCTYPE naming another root", "DOCTYPE names <html>")
case("xinclude", plist('<dict>\n\t<key>a</key>\n\t<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd" parse="text"/>\n</dict>'),
     "an XInclude element (never processed)", "unknown element <xi:include>")
case("unknown-element", plist('<dict>\n\t<key>a</key>\n\t<foo>1</foo>\n</dict>'), "an element that is not part of the format", "unknown element <foo>")
case("namespaced-element", plist('<x:string xmlns:x="urn:x">a</x:string>'), "a known name in a namespace", "unknown element <x:string>")
case("text-in-dict", plist('<dict>\n\tstray\n\t<key>a</key>\n\t<string>b</string>\n</dict>'), "text between elements in a dict", "text 'stray' between elements")
case("text-in-array", plist('<array>\n\t<integer>1</integer> 2\n</array>'), "text between elements in an array", "text '2' between elements")
case("text-after-plist", plist('<string>a</string>') + b'trailing\n', "text after the root element", "Extra content at the end of the document")
case("cdata-between-elements", plist('<array><![CDATA[x]]></array>'), "a CDATA section where no text may be", "CDATA section 'x' between elements")
case("key-without-value", plist('<dict>\n\t<key>a</key>\n\t<string>b</string>\n\t<key>lonely</key>\n</dict>'), "a key at the end of a dict", "'lonely' has no value")
case("two-keys", plist('<dict>\n\t<key>a</key>\n\t<key>b</key>\n\t<string>c</string>\n</dict>'), "two keys in a row", "follows the key 'a'")
case("value-without-key", plist('<dict>\n\t<string>orphan</string>\n</dict>'), "a value in a dict with no key", "<string> in a <dict> has no <key>")
case("key-in-array", plist('<array>\n\t<key>a</key>\n</array>'), "a key directly inside an array", "<key> is only allowed directly inside <dict>")
case("duplicate-key", plist('<dict>\n\t<key>a</key>\n\t<integer>1</integer>\n\t<key>a</key>\n\t<integer>2</integer>\n</dict>'), "the same key twice", "duplicate key 'a'")
case("element-in-string", plist('<string>a<integer>1</integer>c</string>'), "a value element inside a string", "element <integer> is not allowed inside <string>")
case("attribute-on-value", plist('<string id="x">a</string>'), "an attribute on a value element", "unexpected attribute 'id'")
case("integer-overflow", plist('<integer>18446744073709551616</integer>'), "2^64, one above the largest integer", "outside the range")
case("integer-underflow", plist('<integer>-9223372036854775809</integer>'), "-2^63 - 1, one below the smallest integer", "outside the range")
case("integer-spaces", plist('<integer> 12 </integer>'), "an integer with surrounding spaces", "invalid character")
case("integer-letters", plist('<integer>12abc</integer>'), "an integer with letters", "invalid character")
case("integer-empty", plist('<integer></integer>'), "an empty integer", "empty <integer>")
case("integer-fraction", plist('<integer>1.5</integer>'), "a fraction in an integer", "invalid character")
case("real-two-points", plist('<real>1.2.3</real>'), "a real with two decimal points", "is not a number")
case("real-word", plist('<real>abc</real>'), "a real that is a word", "is not a number")
case("real-empty", plist('<real/>'), "an empty real", "empty <real>")
case("real-bad-exponent", plist('<real>1e</real>'), "a real with an exponent but no digits", "exponent without digits")
case("real-hex", plist('<real>0x1p3</real>'), "a hexadecimal float", "is not a number")
case("date-month-13", plist('<date>2026-13-01T00:00:00Z</date>'), "month 13", "has month 13")
case("date-february-30", plist('<date>2026-02-30T00:00:00Z</date>'), "30 February", "has day 30")
case("date-no-zone", plist('<date>2026-11-20T10:00:00</date>'), "a date without the Z", "is malformed")
case("date-no-time", plist('<date>2026-11-20</date>'), "a date without a time", "is malformed")
case("date-garbage", plist('<date>yesterday</date>'), "a date that is a word", "is malformed")
case("date-hour-24", plist('<date>2026-11-20T24:00:00Z</date>'), "hour 24", "time of day out of range")
case("base64-invalid-character", plist('<data>AA*A</data>'), "a character outside the base64 alphabet", "invalid character '*'")
case("base64-bad-padding", plist('<data>A===</data>'), "padding in the second position", "misplaced")
case("base64-padding-then-data", plist('<data>AB=C</data>'), "data after padding", "continues after '=' padding")
case("base64-truncated", plist('<data>AAECA</data>'), "an incomplete final group", "incomplete group")
case("invalid-utf8", plist('<string>caf\xff</string>').replace(b'caf\xc3\xbf', b'caf\xff'), "a byte that is not UTF-8", "not proper UTF-8")
case("overlong-utf8", plist('<string>X</string>').replace(b'X', b'\xc0\xaf'), "an overlong encoding of '/'", "not proper UTF-8")
case("utf8-surrogate", plist('<string>X</string>').replace(b'X', b'\xed\xa0\x80'), "a UTF-16 surrogate encoded in UTF-8", "Char 0xD800 out of allowed range")
case("nul-byte", plist('<string>aX</string>').replace(b'aX', b'a\x00'), "a NUL byte in a string", "Char 0x0 out of allowed range")
case("control-character", plist('<string>a\x01b</string>'), "a control character XML forbids", "invalid Char value 1")
case("encoding-mismatch", b'\xef\xbb\xbf' + ('<?xml version="1.0" encoding="UTF-16"?>\n' + D + '<plist version="1.0"><string>x</string></plist>\n').encode(),
     "a UTF-8 byte-order mark with a declared UTF-16 encoding", "labelled UTF-16")
case("truncated", plist('<dict>\n\t<key>title</key>\n\t<string>Visitor feedback</string>\n</dict>')[:-40], "a file cut off mid-element", "the document ends before <string> is closed")
case("empty", b'', "an empty file", "the document is empty")
case("declaration-only", H, "only the XML declaration", "the document has no root element")
case("two-values", plist('<string>a</string>\n<string>b</string>'), "two values inside <plist>", "more than one value")
case("two-roots", plist('<string>a</string>') + b'<plist version="1.0"><string>b</string></plist>\n', "a second root element", "Extra content at the end of the document")
case("empty-plist", plist(''), "a <plist> element without a value", "<plist> contains no value")
case("wrong-root", H + '<dict><key>a</key><string>b</string></dict>\n', "a root element other than <plist>", "the root element must be <plist>")
case("true-with-text", plist('<true>yes</true>'), "text inside <true>", "<true> must be empty")
case("nested-plist", plist('<array><plist/></array>'), "a <plist> inside a value", "<plist> may only be the root element")
case("deep-nesting-1000", plist('<array>' * 1000 + '</array>' * 1000), "1,000 nested arrays (the limit is 128)", "nested deeper than 128 levels")
case("long-element-name", plist('<' + 'a' * 5000 + '/>'), "an unknown element with a 5,000-character name", "unknown element")
case("unclosed-comment", plist('<!-- never closed <string>a</string>'), "a comment that never ends", "Comment not terminated")
case("mismatched-tags", plist('<string>a</integer>'), "an end tag that does not match", "Opening and ending tag mismatch")

case("encoding-conversion-failure", b'<?xml version="1.0" encoding="ISO-2022-JP"?>\n<plist>\n\t\t<string>\xff\xfe</string></plist>\n',
     "bytes the declared encoding (ISO-2022-JP) cannot convert; found by fuzzing", "input conversion failed")

import json
with open("expected.json", "w") as f:
    json.dump([{"file": "%02d-%s.plist" % (i + 1, name), "what": what, "message": frag} for i, (name, data, what, frag) in enumerate(cases)], f, indent=1, ensure_ascii=False)
    f.write("\n")
for i, (name, data, what, frag) in enumerate(cases):
    with open("%02d-%s.plist" % (i + 1, name), "wb") as f:
        f.write(data)
print(len(cases))
