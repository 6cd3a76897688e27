package toolmend

import (
	"encoding/binary"
	"errors"
	"math"
)

// Reading the call record RepairCall gets from the engine (crates/toolmend-ffi/src/record.rs):
// a fixed head of codes and flags, and tagged fields for what the head does not say. A valid
// call is all head: its name, text and arguments are the caller's own input, so nothing is
// copied back and nothing is decoded. The codes below are the header's (toolmend.h); the cgo
// build checks at compile time that they agree (record_cgo.go).

// The head's codes (0: named by a field, or for an outcome, none).
const (
	statusValid       = 1
	statusRepaired    = 2
	statusRecovered   = 3
	statusInvalid     = 4
	statusSuppressed  = 5
	statusUnvalidated = 6

	originNative    = 1
	originContent   = 2
	originReasoning = 3

	outcomeLocalSalvage = 1
	outcomeReprompt     = 2
	outcomeGaveUp       = 3
)

// The head's labels, by code.
var (
	statusByCode = [...]Status{statusValid: StatusValid, statusRepaired: StatusRepaired,
		statusRecovered: StatusRecovered, statusInvalid: StatusInvalid,
		statusSuppressed: StatusSuppressed, statusUnvalidated: StatusUnvalidated}
	originByCode  = [...]string{originNative: "native", originContent: "content", originReasoning: "reasoning"}
	outcomeByCode = [...]string{outcomeLocalSalvage: "local-salvage", outcomeReprompt: "re-prompt", outcomeGaveUp: "gave-up"}
)

// The head's flags: which values are the caller's own input.
const (
	callNameIsInput     = 1
	callTextIsInput     = 2
	callArgumentsIsText = 4
	callKnownFlags      = callNameIsInput | callTextIsInput | callArgumentsIsText
)

// The body's field tags.
const (
	fieldID            = 1
	fieldName          = 2
	fieldArguments     = 3
	fieldArgumentsText = 4
	fieldRepairKind    = 5
	fieldRepairPath    = 6
	fieldNote          = 7
	fieldError         = 8
	fieldNativeIndex   = 9
	fieldStatus        = 10
	fieldOrigin        = 11
	fieldOutcome       = 12
)

// fieldHeader is a field's tag and length (u32, little-endian) before its bytes.
const fieldHeader = 5

var errBadRecord = errors.New("toolmend: malformed call record from the engine")

// callHead is the fixed part of a call record.
type callHead struct{ status, origin, outcome, flags uint8 }

// readRecord builds the result of RepairCall(name, input) from its record. Text fields are
// substrings of one copy of the body (one allocation for all of them); Arguments is a copy
// of its own, as callers may change it.
func (c *CallResult) readRecord(h callHead, body []byte, name, input string) error {
	*c = CallResult{Repairs: []Repair{}, Notes: []string{}}
	if h.flags&^callKnownFlags != 0 || int(h.status) >= len(statusByCode) ||
		int(h.origin) >= len(originByCode) || int(h.outcome) >= len(outcomeByCode) {
		return errBadRecord
	}
	c.Status, c.Origin, c.Outcome = statusByCode[h.status], originByCode[h.origin], outcomeByCode[h.outcome]
	if h.flags&callNameIsInput != 0 {
		c.Name = name
	}
	if h.flags&callTextIsInput != 0 {
		c.ArgumentsText = input
	}
	var text string
	if len(body) > 0 {
		text = string(body)
	}
	pathDue := false // a repair kind was read and its path is next
	for i := 0; i < len(body); {
		if len(body)-i < fieldHeader {
			return errBadRecord
		}
		tag := body[i]
		n := uint64(binary.LittleEndian.Uint32(body[i+1 : i+fieldHeader]))
		i += fieldHeader
		if n > uint64(len(body)-i) || pathDue != (tag == fieldRepairPath) {
			return errBadRecord
		}
		value := text[i : i+int(n)]
		i += int(n)
		switch tag {
		case fieldID:
			c.ID = value
		case fieldName:
			c.Name = value
		case fieldArguments:
			c.Arguments = []byte(value)
		case fieldArgumentsText:
			c.ArgumentsText = value
		case fieldRepairKind:
			c.Repairs = append(c.Repairs, Repair{Kind: value})
			pathDue = true
		case fieldRepairPath:
			c.Repairs[len(c.Repairs)-1].Path = value
			pathDue = false
		case fieldNote:
			c.Notes = append(c.Notes, value)
		case fieldError:
			c.Error = value
		case fieldNativeIndex:
			if n != 8 {
				return errBadRecord
			}
			index := binary.LittleEndian.Uint64(body[i-8 : i])
			if index > math.MaxInt {
				return errBadRecord
			}
			v := int(index)
			c.NativeIndex = &v
		case fieldStatus:
			c.Status = Status(value)
		case fieldOrigin:
			c.Origin = value
		case fieldOutcome:
			c.Outcome = value
		default:
			// A tag this package does not know is a mismatched ABI, never skipped.
			return errBadRecord
		}
	}
	if pathDue || c.Status == "" || c.Origin == "" {
		return errBadRecord
	}
	if h.flags&callArgumentsIsText != 0 {
		c.Arguments = []byte(c.ArgumentsText)
	}
	return nil
}
