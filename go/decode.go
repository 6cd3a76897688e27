package toolmend

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A decoder for the call results the engine writes in a turn's JSON (RunTurn; RepairCall reads
// a record instead, record.go): encoding/json spends about ten times the engine's own time on
// these few hundred bytes. It reads exactly the JSON the engine writes (an object of known
// fields); unknown fields are skipped, and anything it cannot read is an error, never a guess.

var errBadJSON = errors.New("toolmend: malformed result from the engine")

// UnmarshalJSON reads a call result as the engine writes it (with arguments taken from the
// text when the engine says they are the same).
func (c *CallResult) UnmarshalJSON(data []byte) error { return c.decode(data) }

// The labels a result repeats, kept as constants so reading one allocates nothing.
var (
	statuses = []string{"valid", "repaired", "recovered", "invalid", "suppressed", "unvalidated"}
	origins  = []string{"native", "content", "reasoning"}
)

// decode reads a call result.
func (c *CallResult) decode(data []byte) error {
	r := scanner{b: data}
	*c = CallResult{}
	argumentsIsText := false
	if !r.consume('{') {
		return errBadJSON
	}
	if r.consume('}') {
		return nil
	}
	for {
		key, ok := r.key()
		if !ok || !r.consume(':') {
			return errBadJSON
		}
		switch string(key) {
		case "id":
			ok = r.strOrNull(&c.ID)
		case "name":
			ok = r.strOrNull(&c.Name)
		case "origin":
			ok = r.label(&c.Origin, origins)
		case "status":
			var s string
			ok = r.label(&s, statuses)
			c.Status = Status(s)
		case "arguments":
			var raw []byte
			if raw, ok = r.value(); ok && string(raw) != "null" {
				c.Arguments = append([]byte(nil), raw...)
			}
		case "argumentsIsText":
			argumentsIsText, ok = r.boolean()
		case "argumentsText":
			ok = r.strOrNull(&c.ArgumentsText)
		case "repairs":
			ok = r.repairs(&c.Repairs)
		case "notes":
			ok = r.strings(&c.Notes)
		case "outcome":
			ok = r.strOrNull(&c.Outcome)
		case "error":
			ok = r.strOrNull(&c.Error)
		case "nativeIndex":
			ok = r.intOrNull(&c.NativeIndex)
		default:
			_, ok = r.value()
		}
		if !ok {
			return errBadJSON
		}
		if r.consume('}') {
			break
		}
		if !r.consume(',') {
			return errBadJSON
		}
	}
	if argumentsIsText {
		c.Arguments = []byte(c.ArgumentsText)
	}
	return nil
}

// scanner reads JSON tokens from b.
type scanner struct {
	b []byte
	i int
}

func (r *scanner) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// consume skips c (after white space) if it is next.
func (r *scanner) consume(c byte) bool {
	r.space()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *scanner) literal(word string) bool {
	r.space()
	if len(r.b)-r.i >= len(word) && string(r.b[r.i:r.i+len(word)]) == word {
		r.i += len(word)
		return true
	}
	return false
}

func (r *scanner) boolean() (bool, bool) {
	if r.literal("true") {
		return true, true
	}
	return false, r.literal("false")
}

func (r *scanner) strOrNull(dst *string) bool {
	if r.literal("null") {
		*dst = ""
		return true
	}
	s, ok := r.str()
	*dst = s
	return ok
}

func (r *scanner) intOrNull(dst **int) bool {
	if r.literal("null") {
		return true
	}
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	n, err := strconv.Atoi(string(r.b[start:r.i]))
	if err != nil {
		return false
	}
	*dst = &n
	return true
}

// key reads an object key as bytes (keys the engine writes hold no escapes).
func (r *scanner) key() ([]byte, bool) {
	if !r.consume('"') {
		return nil, false
	}
	start := r.i
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case '"':
			r.i++
			return r.b[start : r.i-1], true
		case '\\':
			return nil, false
		}
		r.i++
	}
	return nil, false
}

// label reads a string that is usually one of known; a known one is not copied.
func (r *scanner) label(dst *string, known []string) bool {
	save := r.i
	if raw, ok := r.key(); ok {
		for _, k := range known {
			if string(raw) == k {
				*dst = k
				return true
			}
		}
	}
	r.i = save
	return r.strOrNull(dst)
}

// str reads a string, decoding escapes.
func (r *scanner) str() (string, bool) {
	if !r.consume('"') {
		return "", false
	}
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			s := string(r.b[start:r.i])
			r.i++
			return s, true
		case c == '\\':
			return r.escaped(start)
		case c < 0x20:
			return "", false
		default:
			r.i++
		}
	}
	return "", false
}

// escaped finishes a string that holds escapes (from start, its first byte).
func (r *scanner) escaped(start int) (string, bool) {
	out := make([]byte, r.i-start, len(r.b)-start)
	copy(out, r.b[start:r.i])
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			// Copy the run up to the next quote, backslash or control byte at once.
			j := r.i + 1
			for j < len(r.b) && r.b[j] != '"' && r.b[j] != '\\' && r.b[j] >= 0x20 {
				j++
			}
			out = append(out, r.b[r.i:j]...)
			r.i = j
			continue
		}
		if r.i+1 >= len(r.b) {
			return "", false
		}
		e := r.b[r.i+1]
		r.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			rr, ok := r.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(rr) {
				// A pair is \uD8xx\uDCxx; a lone half is U+FFFD, as encoding/json reads it.
				save := r.i
				if r.i+1 < len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
					r.i += 2
					if low, ok := r.hex4(); ok {
						if dec := utf16.DecodeRune(rr, low); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							continue
						}
					}
				}
				r.i = save
				rr = utf8.RuneError
			}
			out = utf8.AppendRune(out, rr)
		default:
			return "", false
		}
	}
	return "", false
}

func (r *scanner) hex4() (rune, bool) {
	if len(r.b)-r.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(r.b[r.i:r.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	r.i += 4
	return rune(n), true
}

func (r *scanner) strings(dst *[]string) bool {
	if r.literal("null") {
		return true
	}
	if !r.consume('[') {
		return false
	}
	*dst = []string{}
	if r.consume(']') {
		return true
	}
	for {
		s, ok := r.str()
		if !ok {
			return false
		}
		*dst = append(*dst, s)
		if r.consume(']') {
			return true
		}
		if !r.consume(',') {
			return false
		}
	}
}

func (r *scanner) repairs(dst *[]Repair) bool {
	if r.literal("null") {
		return true
	}
	if !r.consume('[') {
		return false
	}
	*dst = []Repair{}
	if r.consume(']') {
		return true
	}
	for {
		var rep Repair
		if !r.consume('{') {
			return false
		}
		for !r.consume('}') {
			key, ok := r.str()
			if !ok || !r.consume(':') {
				return false
			}
			switch key {
			case "kind":
				ok = r.strOrNull(&rep.Kind)
			case "path":
				ok = r.strOrNull(&rep.Path)
			default:
				_, ok = r.value()
			}
			if !ok {
				return false
			}
			r.consume(',')
		}
		*dst = append(*dst, rep)
		if r.consume(']') {
			return true
		}
		if !r.consume(',') {
			return false
		}
	}
}

// value skips one JSON value and returns its bytes (nesting bounded by the engine's depth
// limit; strings are skipped escape-aware).
func (r *scanner) value() ([]byte, bool) {
	r.space()
	start := r.i
	depth := 0
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case '"':
			if _, ok := r.skipString(); !ok {
				return nil, false
			}
			if depth == 0 {
				return r.b[start:r.i], true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return r.b[start:r.i], r.i > start
			}
			depth--
			if depth == 0 {
				r.i++
				return r.b[start:r.i], true
			}
		case ',':
			if depth == 0 {
				return r.b[start:r.i], r.i > start
			}
		}
		r.i++
	}
	return r.b[start:r.i], depth == 0 && r.i > start
}

func (r *scanner) skipString() (int, bool) {
	r.i++ // the opening quote
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case '\\':
			r.i += 2
		case '"':
			r.i++
			return r.i, true
		default:
			r.i++
		}
	}
	return r.i, false
}
