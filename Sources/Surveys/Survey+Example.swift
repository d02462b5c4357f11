import Foundation

extension Survey {
    /// The design's example survey in the interchange form: one item of each of the
    /// seven kinds, all answered but the text block. `survey demo` starts from it.
    public static let exampleJSON = #"""
        {
          "title": "Visitor feedback",
          "items": [
            {"title": "Would you come again?", "kind": "binary", "options": ["No", "Yes"], "answer": 1},
            {"title": "Thank you", "kind": "textOnly", "text": "Your answers stay on this device."},
            {"title": "Your name", "kind": "textField", "subtitle": "First and last", "answer": "Ada"},
            {"title": "Date of visit", "kind": "datePicker", "answer": "2026-11-20T10:00:00Z"},
            {"title": "Rate us", "kind": "slider", "minimum": 0, "maximum": 10, "roundToInteger": true, "answer": 8},
            {"title": "Favourite dish", "kind": "picker", "options": ["Soup", "Fish", "Cake"], "answer": "Cake"},
            {"title": "What did you try?", "kind": "multiTF", "options": ["Soup", "Fish", "Cake", "Tea"],
             "answer": [true, false, true, false]}
          ]
        }
        """#
}
