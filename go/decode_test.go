package toolmend

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
)

// The fast decoder reads what encoding/json reads, on every string the engine could write.
func TestCallResultDecoderAgreesWithEncodingJSON(t *testing.T) {
	texts := []string{"", "plain", "quote \" back \\ slash /", "ctl \n\t\r\b\f \u0001", "é ☃ 🎉",
		"\u2028\u2029", `{"a": [1, "]"]}`}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		b := make([]rune, rng.Intn(12))
		for j := range b {
			b[j] = []rune{'a', '"', '\\', '\n', 0x1f, 'é', 0x1F600, 0xFFFD, '{', '}'}[rng.Intn(10)]
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		idx := 3
		want := map[string]any{
			"id": text, "name": "read", "origin": "native", "status": "invalid",
			"arguments": map[string]any{"k": text, "n": []any{1.5, nil, true}}, "argumentsText": text,
			"repairs": []any{map[string]any{"kind": "string_to_number", "path": "/" + text}},
			"notes":   []string{text, "x"}, "outcome": nil, "error": text, "nativeIndex": idx,
			"future": map[string]any{"skipped": []any{text}},
		}
		data, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var fast CallResult
		if err := fast.UnmarshalJSON(data); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		type plain CallResult // encoding/json's reading, without the fast method
		var slow plain
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, CallResult(slow)) {
			t.Fatalf("%q:\n fast %+v\n slow %+v", data, fast, slow)
		}
	}
}

func TestCallResultDecoderTakesArgumentsFromTheText(t *testing.T) {
	var c CallResult
	if err := c.UnmarshalJSON([]byte(`{"status":"valid","argumentsIsText":true,"argumentsText":"{ \"a\" : 1 }","repairs":[],"notes":[]}`)); err != nil {
		t.Fatal(err)
	}
	if string(c.Arguments) != `{ "a" : 1 }` || c.ArgumentsText != `{ "a" : 1 }` || c.Status != StatusValid {
		t.Fatalf("got %+v", c)
	}
	for _, bad := range []string{``, `{`, `{"id":}`, `{"id":"a"`, `{"notes":[1]}`, `{"nativeIndex":"x"}`, "{\"id\":\"\x01\"}"} {
		if err := new(CallResult).UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
}
