"""The json_repair-compatible functions: same signatures and return conventions."""

from __future__ import annotations

import io
import json

import pytest

import toolmend


def test_valid_json_of_every_root_is_returned_as_json_loads_reads_it():
    for text in ['{"a": [1, 2.5, "x"]}', "[1, 2]", '"text"', "12", "true", "null"]:
        assert toolmend.loads(text) == json.loads(text)


def test_broken_objects_are_repaired():
    assert toolmend.loads("{'path': 'a.txt', 'recursive': True,}") == {"path": "a.txt", "recursive": True}
    assert toolmend.loads('{"a": 1 "b": 2}') == {"a": 1, "b": 2}
    assert toolmend.loads('Here you go: {"a": 1} hope it helps') == {"a": 1}
    assert toolmend.loads('```json\n{"a": 1}\n```') == {"a": 1}


def test_any_root_is_accepted():
    assert toolmend.loads("[1, 2, 'three',") == [1, 2, "three"]
    assert toolmend.loads("'single quoted'") == "single quoted"
    assert toolmend.loads('"cut string') == "cut string"
    # A bare Python literal as the whole text is json_repair's "": only a container holds one.
    assert toolmend.loads("True") == "" and toolmend.repair_json(" False ") == ""
    assert toolmend.loads("[True, None]") == [True, None]
    assert toolmend.salvage_json("True")[0] is True
    assert toolmend.loads('{"a": 1}{"b": 2}') == [{"a": 1}, {"b": 2}]
    # json_repair's rules for several values: an empty one gives way, a same-shape one updates.
    assert toolmend.loads('[]{"key": "value"}') == {"key": "value"}
    assert toolmend.loads('[{"k": "v"}][{"k": "w"}]') == [{"k": "w"}]
    assert toolmend.loads("[") == [] and toolmend.loads("{") == {}
    # A comma between them makes them a list of values, not an update (json_repair's rule).
    assert toolmend.loads('{"k": "v"}, {"k": "w"}') == [{"k": "v"}, {"k": "w"}]
    assert toolmend.loads('{"k": "v"}\n{"k": "w"}') == {"k": "w"}
    assert toolmend.loads('[{"k": "v, }"}], [{"k": "w"}]') == [[{"k": "v, }"}], [{"k": "w"}]]


def test_truncated_documents_are_closed():
    assert toolmend.loads('{"a": [1, 2, {"b": "te') == {"a": [1, 2, {"b": "te"}]}
    assert toolmend.loads('{"a": 1, "b') == {"a": 1}


def test_stream_stable_is_json_repairs():
    # Default (False): a cut string loses its trailing blanks and keeps a dangling backslash.
    assert toolmend.repair_json('{"key": "val\\') == '{"key": "val\\\\"}'
    assert toolmend.repair_json('{"key": "val\\n') == '{"key": "val"}'
    assert toolmend.loads('["a ", "b  ') == ["a ", "b"]
    # True: exactly what was read, so a stream's growing prefixes read as growing values.
    assert toolmend.repair_json('{"key": "val\\', stream_stable=True) == '{"key": "val"}'
    assert toolmend.repair_json('{"key": "val\\n', stream_stable=True) == '{"key": "val\\n"}'
    assert toolmend.loads('["a ", "b  ', stream_stable=True) == ["a ", "b  "]
    # Closed strings keep their blanks either way.
    assert toolmend.loads('{"key": "val "}') == {"key": "val "}
    assert toolmend.loads('{"key": "val ",}') == {"key": "val "}


def test_a_bare_member_ends_an_unclosed_string():
    assert toolmend.loads('{"a": "first, b: 1}') == {"a": "first", "b": 1}
    assert toolmend.loads('{"a": "Hello, world: it is}') == {"a": "Hello, world: it is"}


def test_a_stray_quote_line_goes_unless_the_string_holds_a_fence():
    assert toolmend.loads('{"a": "hello\n"\n",}') == {"a": "hello"}
    assert toolmend.loads('{"a": "\n```{}```\n"\n",\n"b": "x"}') == {"a": '\n```{}```\n"', "b": "x"}


def test_a_member_missing_its_colon_is_read():
    assert toolmend.loads('{"key": "value", "key2" "value2"}') == {"key": "value", "key2": "value2"}
    assert toolmend.loads('{"key": "value"}, "key2" "value2"}') == {"key": "value", "key2": "value2"}


def test_misplaced_quotes_and_a_missing_brace_are_read():
    assert toolmend.loads('["key":"value"]') == [{"key": "value"}]
    assert toolmend.loads('["key":"value"}]') == [{"key": "value"}]
    assert toolmend.loads('{"key:"value"}') == {"key": "value"}
    assert toolmend.loads('{"key:value}') == {"key": "value"}
    assert toolmend.loads('{"k"e"y": "value"}') == {'k"e"y': "value"}
    assert toolmend.loads('{"words": abcdef", "n": 12345", "w": ghijkl" }') == {"words": "abcdef", "n": 12345, "w": "ghijkl"}
    assert toolmend.loads('{"lorem": ipsum, sic, datum.",}') == {"lorem": "ipsum, sic, datum."}
    # A key with a colon, followed by its own colon, is that key; doubled quotes stay refused.
    assert toolmend.loads('{"a:b": 1}') == {"a:b": 1}
    assert toolmend.loads('{"" key":"val"') == ""
    # Tool calls never read these.
    with pytest.raises(toolmend.SalvageError):
        toolmend.salvage_json('["key":"value"]', lenient_scalars=False)


def test_refusals_give_an_empty_string():
    # json_repair's answer for text it cannot repair; toolmend also refuses to guess these.
    for text in ["", "just prose", '{"a": 1, "b": ...}', "[1, 2, ...]", '{"a": sure, go ahead}']:
        assert toolmend.loads(text) == "", text
        assert toolmend.repair_json(text) == "", text


def test_repair_json_returns_text_with_json_dumps_defaults():
    assert toolmend.repair_json("{'a': 'é'}") == '{"a": "\\u00e9"}'
    assert toolmend.repair_json("{'a': 'é'}", ensure_ascii=False) == '{"a": "é"}'
    assert toolmend.repair_json("{'a': 1}", indent=2) == '{\n  "a": 1\n}'
    assert toolmend.repair_json("{'a': 1}", return_objects=True) == {"a": 1}
    # A value equal to "" is "", not '""'.
    assert toolmend.repair_json('""') == ""


def test_skip_json_loads_goes_straight_to_the_parser():
    assert toolmend.loads('{"a": 1}', skip_json_loads=True) == {"a": 1}
    # json.loads reads NaN; toolmend's parser refuses it.
    assert toolmend.loads("NaN", skip_json_loads=True) == ""
    assert toolmend.loads("[NaN]") != ""
    assert toolmend.loads("[NaN]", skip_json_loads=True) == ""


def test_logging_returns_the_repairs():
    value, log = toolmend.loads("{'a': 1,}", logging=True)
    assert value == {"a": 1}
    kinds = {entry["text"] for entry in log}
    assert {"quotes_normalized", "trailing_comma_removed"} <= kinds
    assert toolmend.loads('{"a": 1}', logging=True) == ({"a": 1}, [])
    assert toolmend.loads("prose", logging=True) == ("", [])


def test_strict_raises_on_any_repair():
    with pytest.raises(ValueError):
        toolmend.loads("{'a': 1}", strict=True, skip_json_loads=True)
    with pytest.raises(ValueError):
        toolmend.loads("prose", strict=True)
    assert toolmend.loads('{"a": 1}', strict=True) == {"a": 1}


def test_schema_mode_is_not_supported():
    with pytest.raises(NotImplementedError):
        toolmend.loads("{}", schema={"type": "object"})


def test_load_and_from_file(tmp_path):
    assert toolmend.load(io.StringIO("{'a': [1, 2")) == {"a": [1, 2]}
    path = tmp_path / "broken.json"
    path.write_text("[{'x': 1}, {'y': 2},]", encoding="utf-8")
    assert toolmend.from_file(path) == [{"x": 1}, {"y": 2}]
    assert toolmend.from_file(str(path)) == [{"x": 1}, {"y": 2}]


def test_numbers_keep_their_value():
    assert toolmend.loads("{'big': 123456789012345678901234567890}") == {"big": 123456789012345678901234567890}
    assert toolmend.loads("{'f': 1.5e3, 'n': -2}") == {"f": 1500.0, "n": -2}


def test_layout_before_a_closing_quote_is_dropped():
    # A raw line break (and the blanks around it) right before the closing quote is layout.
    assert toolmend.loads('{\n"a": "\n```{}```\n",\n"b": "x",\n}') == {"a": "\n```{}```", "b": "x"}
    assert toolmend.loads('{"a": "line one\nline two\n    ", "b": 1,}') == {"a": "line one\nline two", "b": 1}
    assert toolmend.loads('{"key_1\n": "value"}') == {"key_1": "value"}
    # An escaped \n is content, and so are blanks without a line break.
    assert toolmend.loads('{"a": "x\\n", "b": 1,}') == {"a": "x\n", "b": 1}
    assert toolmend.loads("{'a': 'x  ',}") == {"a": "x  "}
    # Valid JSON is never touched, and the reading can be turned off.
    assert toolmend.loads('{"a": "x\\n"}') == {"a": "x\n"}
    value, _, _ = toolmend.salvage_json('{"a": "x\n",}', trim_layout=False)
    assert value == {"a": "x\n"}


def test_python_number_spellings_and_digit_led_tokens():
    assert toolmend.loads('{"a": .25, "b": 1. , "c": 82_461_110, "d": 1_234.5_6}') == {
        "a": 0.25,
        "b": 1.0,
        "c": 82461110,
        "d": 1234.56,
    }
    assert toolmend.loads('{"key": TRUE, "key2": FALSE, "key3": Null}') == {"key": True, "key2": False, "key3": None}
    assert toolmend.loads('{"here": "now", "key": 1/3, "foo": "bar"}') == {"here": "now", "key": "1/3", "foo": "bar"}
    assert toolmend.loads('{"key": 10-20}') == {"key": "10-20"}
    assert toolmend.loads('{"key": 1.1.1}') == {"key": "1.1.1"}
    assert toolmend.loads("[1, 2notanumber]") == [1, "2notanumber"]
    assert toolmend.loads('{"id": 57eeeeb1-450b-482c-81b9-4be77e95dee2}') == {"id": "57eeeeb1-450b-482c-81b9-4be77e95dee2"}
    # An exponent with no digits is its mantissa; a sign the text ends on is cut.
    assert toolmend.loads('{"key": 1e }') == {"key": 1}
    assert toolmend.loads("[- ") == []
    # What looks cut or would be invented stays refused.
    for text in ['{"key": 10- }', '{"key": }', '{"a": ipsum, sic, datum}']:
        assert toolmend.loads(text) == "", text
    with pytest.raises(toolmend.JsonSyntaxError):
        toolmend.salvage_json('{"a": .25}', lenient_scalars=False)


def test_python_tuples_sets_and_one_word_values():
    # Python tuples and sets are the lists they print as; a group around one value is the value.
    assert toolmend.loads('("a", "b", "c")') == ["a", "b", "c"]
    assert toolmend.loads('{"coords": (1, 2), "empty": (), "ok": True}') == {"coords": [1, 2], "empty": [], "ok": True}
    assert toolmend.loads("((1, 2), (3, 4))") == [[1, 2], [3, 4]]
    assert toolmend.loads('{"g": ("x"), "n": (1)}') == {"g": "x", "n": 1}
    assert toolmend.loads("{'item1', 'item2'}") == ["item1", "item2"]
    assert toolmend.loads("Here it is:\n```json\n(1, 2)\n```") == [1, 2]
    # A parenthesis in prose stays prose when the JSON reads without it.
    assert toolmend.loads('Decision (final):\n```json\n{"a": 1}\n```') == {"a": 1}
    # Unquoted words as a value are the string they spell (JavaScript's and YAML's reading).
    assert toolmend.loads('{"name": "John", "city": New York}') == {"name": "John", "city": "New York"}
    assert toolmend.loads('[{"name": Weiss Savage\n}]') == [{"name": "Weiss Savage"}]
    assert toolmend.loads('{"name": John, "age": 30}') == {"name": "John", "age": 30}
    assert toolmend.loads("{key:value,key2:value2}") == {"key": "value", "key2": "value2"}
    assert toolmend.loads('{"key": value "key2": "value2"}') == {"key": "value", "key2": "value2"}
    # Prose, and words that mean something else elsewhere, stay refused.
    for text in ['{"a": sic tamet. "b": 1}', '{"a": yes}', '{"a": undefined}', '{"a": nil}', "just prose"]:
        assert toolmend.loads(text) == "", text
    # Other document readings: an array left open before the object's `}`, an escaped smart
    # quote, a string cut before its first character.
    assert toolmend.loads("{foo: [}") == {"foo": []}
    assert toolmend.loads('{"t": "a \\\u201e b", "y": 1}') == {"t": "a \u201e b", "y": 1}
    assert toolmend.loads('["') == []
    # A closing fence right after a cut string's quote or its object's closer ends the string;
    # after a line break it is code in the string.
    assert toolmend.loads('{"key": "value, value2"```') == {"key": "value, value2"}
    assert toolmend.loads('{"key": "value}```') == {"key": "value"}
    assert toolmend.loads('{"key": "```py\nx\n```') == {"key": "```py\nx\n```"}
    # Without the document reading (as tool calls read text) they are refused.
    value, repairs, _ = toolmend.salvage_json('{"c": (1, 2)}')
    assert value == {"c": [1, 2]} and ("python_literal", 6) in repairs
    with pytest.raises(toolmend.SalvageError):
        toolmend.salvage_json('{"c": (1, 2)}', lenient_scalars=False)
    with pytest.raises(toolmend.SalvageError):
        toolmend.salvage_json('{"name": John}', lenient_scalars=False)


def test_import_as_json_repair():
    import toolmend as json_repair

    assert json_repair.repair_json("{'a': 1}") == '{"a": 1}'
    assert json_repair.loads("[1,") == [1]


def test_salvage_json_reports_repairs_and_errors():
    value, repairs, truncated = toolmend.salvage_json("{'a': [1, 2")
    assert value == {"a": [1, 2]} and truncated
    assert ("truncation_closed", 11) in repairs
    with pytest.raises(toolmend.JsonSyntaxError) as err:
        toolmend.salvage_json("{'a': [1, 2", truncation="refuse")
    assert err.value.kind == "syntax" and err.value.offset == 11
    with pytest.raises(toolmend.NoJsonError):
        toolmend.salvage_json("nothing here")
    with pytest.raises(toolmend.NonFiniteError):
        toolmend.salvage_json("[Infinity]")
    with pytest.raises(toolmend.TooLargeError):
        toolmend.salvage_json("[1, 2, 3]", max_bytes=4)
    with pytest.raises(toolmend.TooDeepError):
        toolmend.salvage_json("[[[[1,", max_depth=2)
    with pytest.raises(ValueError):
        toolmend.salvage_json("[1]", truncation="guess")
    # Every salvage error is a ToolmendError and a ValueError.
    assert issubclass(toolmend.SalvageError, toolmend.ToolmendError)
    assert issubclass(toolmend.ToolmendError, ValueError)


def test_large_input_is_read_with_the_gil_released():
    big = "[" + ", ".join("{'k%d': 'v'}" % i for i in range(20000))
    value = toolmend.loads(big)
    assert len(value) == 20000 and value[-1] == {"k19999": "v"}


VALID = [
    '{"a": [1, -2, 3.5, -0.0, 1e3, 2E-2, true, false, null], "b": {"c": ""}}',
    '  [ "x" , { } , [ ] ]  \n',
    '"esc: \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00"',
    '{"k": 1, "k": 2, "j": 3}',
    "12345678901234567890123",
    "-0",
    '"caf\u00e9 \u2603"',
    "[" * 150 + "]" * 150,
]


def test_valid_json_fast_path_gives_json_loads_values():
    for text in VALID:
        expected = json.loads(text)
        assert toolmend.loads(text) == expected, text
        assert type(toolmend.loads(text)) is type(expected), text
        assert toolmend.repair_json(text) == json.dumps(expected), text
    assert list(toolmend.loads('{"k": 1, "j": 0, "k": 2}')) == ["k", "j"]
    assert str(toolmend.loads("[-0.0]")[0]) == "-0.0"


def test_the_fast_path_leaves_what_it_does_not_read_to_the_parser():
    from toolmend._toolmend import loads_strict

    # Not strict JSON: `...`; strict JSON it leaves to serde_json: NotImplemented.
    for text in ['{"a": 1,}', "[1] x", "NaN", "", "[01]", '"tab\there"', "\ufeff[1]"]:
        assert loads_strict(text) is ..., text
    for text in ['"\\ud800"', "[1e999]", "123456789012345678901", "[" * 101 + "]" * 101]:
        assert loads_strict(text) is NotImplemented, text
    assert toolmend.loads("[" * 101 + "]" * 101) == json.loads("[" * 101 + "]" * 101)
    assert loads_strict('{"a": [1, "b"]}') == {"a": [1, "b"]}
    # What it leaves goes the general way: repaired, or json.loads' reading.
    assert toolmend.loads('{"a": 1,}') == {"a": 1}
    assert toolmend.loads('"tab\there"') == "tab\there"


def test_broken_text_reads_the_same_without_the_strict_attempt():
    from toolmend._toolmend import salvage_values

    for text in ["{'a': [1, .5", '{"a": "x\\n",}', "[1, 2,]", "'x'", "True", '{"a": 1}']:
        assert salvage_values(text, broken=True) == salvage_values(text), text
    with pytest.raises(toolmend.NoJsonError):
        salvage_values("prose only", broken=True)


# json_repair's answers (600ede6) for documents that comments separate: the comments are blanks
# between the values, and json_repair's list-or-update rule applies as without them.
COMMENT_SEPARATED = [
    ('{"a": 1} // note\n{"b": 2}', [{"a": 1}, {"b": 2}]),
    ('{"a": 1} /* c */ {"b": 2}', [{"a": 1}, {"b": 2}]),
    ('{"a": 1}\n/* c */\n{"b": 2}', [{"a": 1}, {"b": 2}]),
    ('{"a": 1}\n# c\n{"b": 2}', [{"a": 1}, {"b": 2}]),
    ('{"a": 1} # c\n{"b": 2}', [{"a": 1}, {"b": 2}]),
    ('{"a": 1}, /* c */ {"a": 2}', [{"a": 1}, {"a": 2}]),
    ('{"a": 1}, // c\n{"a": 2}', [{"a": 1}, {"a": 2}]),
    ('{"a": 1}, /* c */ {"b": 2}', [{"a": 1}, {"b": 2}]),
    ('{"a": 1} /* c */ {"a": 2}', {"a": 2}),
    ('{"a": 1} // c\n, {"a": 2}', {"a": 2}),
    ('{"a": 1}\n// c\n{"b": 2}\n// d\n{"c": 3}', [{"a": 1}, {"b": 2}, {"c": 3}]),
    ("{'a': 1} // c\n{'b': 2}", [{"a": 1}, {"b": 2}]),
    ('{"a": 1} // tail', {"a": 1}),
    ('{"a": 1} /* c {"b": 2}', {"a": 1}),
    ('{"a": 1} // c {"b": 2}', {"a": 1}),
]


@pytest.mark.parametrize("text,value", COMMENT_SEPARATED)
def test_comments_between_documents_separate_them(text, value):
    assert toolmend.loads(text) == value
    assert toolmend.repair_json(text, return_objects=True) == value
# Inputs where the one-call path (`loads_document`, `repair_document`) must answer exactly as
# the Python path it shortcuts: roots, literals, numbers Python prints its own way, escapes,
# astral characters, a repeated key, several values, refusals, the 16 KiB line.
ONE_CALL_CASES = [
    '{"a": 1,}', "{'a': 'é😀\x7f\\u0000', 'b': True,}", '{"a": 1.5E+3, "b": 2e-7, "c": 1e22, "d": -0.0}',
    '{"a": 12345678901234567890123, "b": 18446744073709551615}', '{"a": 1e400}', "[1e400]",
    '{"a": .25, "b": 1_000, "c": +1}', '{"k": "\\/ \\b\\f\\n\\r\\t \\"q\\" \\\\"}', "''", '""', "True",
    " None\n", "\x1cFalse", '{"a": 1, "a": 2}', '{"a": 1}{"b": 2}', "prose only", '{"a": }', "NaN",
    '```json\n{"a": 1}\n```', '{"a": "line\n', '{"a": "val\\', '{"a": 1,}' + " " * 17000, "",
]


def python_path(text, stream_stable=False):
    """The answer of the Python path the one-call path shortcuts (`loads`' value)."""
    from toolmend import jsonrepair

    return jsonrepair._parse(text, False, False, False, False, stream_stable)[0]


@pytest.mark.parametrize("stream_stable", [False, True])
def test_the_one_call_path_answers_as_the_python_path(stream_stable):
    from toolmend._toolmend import loads_document, repair_document

    for text in ONE_CALL_CASES:
        expected = python_path(text, stream_stable)
        value = loads_document(text, stream_stable)
        if value is not NotImplemented:
            assert json.dumps(value) == json.dumps(expected) and type(value) is type(expected), text
        dumped = repair_document(text, stream_stable)
        if dumped is not NotImplemented:
            assert dumped == ("" if expected == "" else json.dumps(expected)), text
        assert toolmend.loads(text, stream_stable=stream_stable) == expected or expected != expected, text
    # The cases the Python path answers come back to it.
    assert loads_document('{"a": 1}{"b": 2}') is NotImplemented
    assert repair_document("prose only") is NotImplemented
