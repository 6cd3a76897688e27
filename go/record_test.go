package toolmend

import (
	"encoding/binary"
	"reflect"
	"testing"
)

// field is one tagged field of a record body, as the engine writes it.
func field(tag byte, value string) []byte {
	b := []byte{tag, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], uint32(len(value)))
	return append(b, value...)
}

func body(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

// A valid call's record is all head: the name and text are the input, the arguments the text.
func TestRecordOfAValidCallIsTheInput(t *testing.T) {
	name, input := "read", `{ "path": "/a" }`
	var c CallResult
	head := callHead{statusValid, originNative, 0, callNameIsInput | callTextIsInput | callArgumentsIsText}
	if err := c.readRecord(head, nil, name, input); err != nil {
		t.Fatal(err)
	}
	want := CallResult{Name: name, Origin: "native", Status: StatusValid, Arguments: []byte(input),
		ArgumentsText: input, Repairs: []Repair{}, Notes: []string{}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v", c)
	}
}

// Every field is read, repairs in order with their paths.
func TestRecordFieldsAreRead(t *testing.T) {
	index := make([]byte, 8)
	binary.LittleEndian.PutUint64(index, 3)
	b := body(field(fieldID, "call_1"), field(fieldName, "read"), field(fieldArguments, `{"a":1}`),
		field(fieldArgumentsText, `{"a": 1,`), field(fieldRepairKind, "trailing_comma_removed"),
		field(fieldRepairPath, ""), field(fieldRepairKind, "scalar_coerced"), field(fieldRepairPath, "/a"),
		field(fieldNote, "n1"), field(fieldNote, ""), field(fieldError, "retry"),
		field(fieldNativeIndex, string(index)), field(fieldStatus, "future"), field(fieldOrigin, "elsewhere"),
		field(fieldOutcome, "later"))
	var c CallResult
	if err := c.readRecord(callHead{}, b, "reed", "x"); err != nil {
		t.Fatal(err)
	}
	three := 3
	want := CallResult{ID: "call_1", Name: "read", Origin: "elsewhere", Status: "future",
		Arguments: []byte(`{"a":1}`), ArgumentsText: `{"a": 1,`,
		Repairs: []Repair{{"trailing_comma_removed", ""}, {"scalar_coerced", "/a"}},
		Notes:   []string{"n1", ""}, Outcome: "later", Error: "retry", NativeIndex: &three}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
	// The arguments are the caller's to change: not the body's memory.
	b[len(field(fieldID, "call_1"))+len(field(fieldName, "read"))+fieldHeader] = 'X'
	if string(c.Arguments) != `{"a":1}` {
		t.Fatalf("arguments share the body: %s", c.Arguments)
	}
}

// A record the reader cannot account for is an error, never a guess or a panic.
func TestMalformedRecordsAreRefused(t *testing.T) {
	ok := callHead{statusRepaired, originNative, outcomeLocalSalvage, callNameIsInput}
	bad := []struct {
		name string
		head callHead
		body []byte
	}{
		{"unknown flag", callHead{statusValid, originNative, 0, 8}, nil},
		{"unknown status code", callHead{7, originNative, 0, 0}, nil},
		{"unknown origin code", callHead{statusValid, 4, 0, 0}, nil},
		{"unknown outcome code", callHead{statusValid, originNative, 4, 0}, nil},
		{"no status", callHead{0, originNative, 0, 0}, nil},
		{"no origin", callHead{statusValid, 0, 0, 0}, nil},
		{"unknown tag", ok, field(13, "x")},
		{"cut in a header", ok, field(fieldNote, "x")[:3]},
		{"cut in a value", ok, field(fieldNote, "xyz")[:7]},
		{"length past the end", ok, []byte{fieldNote, 0xff, 0, 0, 0, 'a'}},
		{"length of 4 GiB", ok, []byte{fieldNote, 0xff, 0xff, 0xff, 0xff, 'a'}},
		{"path with no kind", ok, field(fieldRepairPath, "/a")},
		{"kind with no path", ok, field(fieldRepairKind, "k")},
		{"kind, then not its path", ok, body(field(fieldRepairKind, "k"), field(fieldNote, "n"))},
		{"short native index", ok, field(fieldNativeIndex, "1234")},
		{"native index past int", ok, field(fieldNativeIndex, "\xff\xff\xff\xff\xff\xff\xff\xff")},
	}
	for _, b := range bad {
		var c CallResult
		if err := c.readRecord(b.head, b.body, "read", "{}"); err == nil {
			t.Errorf("%s: read as %+v", b.name, c)
		}
	}
	// Every prefix of a good body cut inside a field is refused too.
	good := body(field(fieldArgumentsText, `{"a":1}`), field(fieldRepairKind, "k"), field(fieldRepairPath, "/a"))
	var c CallResult
	if err := c.readRecord(ok, good, "read", "{}"); err != nil {
		t.Fatal(err)
	}
	for cut := range good {
		if cut == 0 || cut == len(field(fieldArgumentsText, `{"a":1}`)) {
			continue // whole fields: a record that says less, still well formed
		}
		if err := c.readRecord(ok, good[:cut], "read", "{}"); err == nil {
			t.Errorf("cut at %d: read", cut)
		}
	}
}
