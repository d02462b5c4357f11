#!/usr/bin/env python3
# Writes the format fixtures: revision packages as older apps (format 1), this build
# (format 2, written by `survey export --package`, see README) and a newer app
# (format 3) wrote them, and broken ones. Run from this folder.
import os, plistlib, shutil

def package(path, metadata, survey=None, raw_survey=None):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(path, "DocumentMetadata.plist"), "wb") as f:
        plistlib.dump(metadata, f)
    if survey is not None:
        with open(os.path.join(path, "Survey.plist"), "wb") as f:
            plistlib.dump(survey, f)
    if raw_survey is not None:
        with open(os.path.join(path, "Survey.plist"), "wb") as f:
            f.write(raw_survey)

answered = {"title": "Visitor feedback (2019)", "items": [
    {"title": "Would you come again?", "type": "Binary", "value1": "No", "value2": "Yes", "result": {"text": "1"}},
    {"title": "Thank you", "type": "TextOnly", "value1": "Your answers stay on this device."},
    {"title": "Your name", "type": "TextField", "value1": "First and last", "result": {"text": "Ada"}},
    {"title": "Date of visit", "type": "DatePicker", "result": {"text": "2019-06-01T09:30:00Z"}},
    {"title": "Rate us", "type": "Slider", "value1": "0", "value2": "10", "value3": "T", "result": {"text": "8"}},
    {"title": "Favourite dish", "type": "Picker", "value1": "Soup|Fish|Cake", "result": {"text": "Cake"}},
    {"title": "What did you try?", "type": "MultiTF", "value1": "Soup|Fish|Cake|Tea", "result": {"text": "TFTF"}},
]}
unanswered = {"title": "Blank form", "items": [
    {"title": "Would you come again?", "type": "Binary", "value1": "No", "value2": "Yes"},
    {"title": "Thank you", "type": "TextOnly"},
    {"title": "Your name", "type": "TextField"},
    {"title": "Date of visit", "type": "DatePicker"},
    {"title": "Temperature", "type": "Slider", "value1": "-5.5", "value2": "40", "value3": "F"},
    {"title": "Favourite dish", "type": "Picker", "value1": "Soup"},
    {"title": "What did you try?", "type": "MultiTF", "value1": "Soup|Fish"},
]}
package("format1/answered.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0001", "FormatVersion": 1}, answered)
# An older app may have written nothing but the document's identity: no FormatVersion means 1.
package("format1/unanswered.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0002"}, unanswered)
package("format3/newer.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0003", "FormatVersion": 3},
        {"title": "From the future", "sections": [{"items": []}]})
package("broken/missing-survey-plist.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0004", "FormatVersion": 1})
package("broken/slider-bounds-not-numbers.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0005", "FormatVersion": 1},
        {"title": "Bad slider", "items": [{"title": "Rate us", "type": "Slider", "value1": "low", "value2": "high"}]})
package("broken/multitf-wrong-length.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0006", "FormatVersion": 1},
        {"title": "Bad checks", "items": [{"title": "Tried", "type": "MultiTF", "value1": "Soup|Fish|Cake", "result": {"text": "TF"}}]})
package("broken/unknown-type.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0007", "FormatVersion": 1},
        {"title": "Bad type", "items": [{"title": "Stars", "type": "Rating", "value1": "5"}]})
package("broken/malformed-xml.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0008", "FormatVersion": 2},
        raw_survey=b'<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n\t<key>title</key>\n\t<string>Cut</string>\n</plist>\n')
package("broken/binary-three-options.survey", {"DocumentUUID": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A0009", "FormatVersion": 2},
        {"title": "Bad binary", "items": [{"id": "5A1D1E7C-0B7E-4F0A-9C3B-2F6E8D9A1001", "title": "Choose", "kind": "binary", "options": ["a", "b", "c"]}]})
package("broken/no-document-uuid.survey", {"FormatVersion": 1}, unanswered)
