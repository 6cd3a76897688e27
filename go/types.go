package toolmend

import (
	"encoding/json"
	"errors"
)

// Version is the engine version this package was written for. The cgo build links a
// version-named symbol (toolmend_version_0_1_0_abi2: the version and the ABI revision), so a
// mismatched archive fails to link.
const Version = "0.1.0"

// abiRevision is the ABI revision of toolmend.h this package reads (TOOLMEND_ABI_REVISION).
const abiRevision = 2

// ErrNoCgo is returned by every function of a build without cgo (CGO_ENABLED=0).
var ErrNoCgo = errors.New("toolmend: this build has no cgo, so the engine is not linked; " +
	"build with CGO_ENABLED=1 and the static archive (see the README), " +
	"or run `toolmend serve` and send requests through the proxy")

// ErrClosed is returned by a method called after Close.
var ErrClosed = errors.New("toolmend: used after Close")

// Error is an input the engine refused (bad tool list JSON, bad options) or a caught panic.
type Error struct {
	// Op names the function ("New", "RepairCall", …).
	Op string
	// Message is the engine's message.
	Message string
	// Panic says the engine panicked (a bug in toolmend; it was caught at the boundary).
	Panic bool
}

func (e *Error) Error() string { return "toolmend: " + e.Op + ": " + e.Message }

// Status is how a call ended.
type Status string

// The statuses a call can end with.
const (
	StatusValid       Status = "valid"
	StatusRepaired    Status = "repaired"
	StatusRecovered   Status = "recovered"
	StatusInvalid     Status = "invalid"
	StatusSuppressed  Status = "suppressed"
	StatusUnvalidated Status = "unvalidated"
)

// Options configure a Mender; the zero value is the engine's defaults.
type Options struct {
	// Recover is "off", "strip", "content" or "all" (calls written as text); "" = default.
	Recover string `json:"recover,omitempty"`
	// Model names the model, for its per-family readings.
	Model string `json:"model,omitempty"`
	// IncludeValues lets messages to the model quote the values that failed.
	IncludeValues bool `json:"includeValues,omitempty"`
	// The limits; 0 keeps the engine's default.
	MaxSalvageBytes   int   `json:"maxSalvageBytes,omitempty"`
	MaxDepth          int   `json:"maxDepth,omitempty"`
	MaxRecoveredCalls int   `json:"maxRecoveredCalls,omitempty"`
	MaxRepairRounds   int   `json:"maxRepairRounds,omitempty"`
	MaxMessageBytes   int   `json:"maxMessageBytes,omitempty"`
	MaxCallKeyMatches int64 `json:"maxCallKeyMatches,omitempty"`
	MaxCallErrors     int64 `json:"maxCallErrors,omitempty"`
}

// Repair is one repair: its kind (a DESIGN §5 name) and the JSON Pointer where it was made.
type Repair struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// CallResult is everything toolmend decided about one call.
type CallResult struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Origin string `json:"origin"`
	Status Status `json:"status"`
	// Arguments is the final arguments as JSON (nil when they could not be read).
	Arguments json.RawMessage `json:"arguments"`
	// ArgumentsText is the text to dispatch: the input bytes when valid.
	ArgumentsText string   `json:"argumentsText"`
	Repairs       []Repair `json:"repairs"`
	// Notes are value-free notes for the model, to prepend to the tool result.
	Notes []string `json:"notes"`
	// Outcome is "local-salvage", "re-prompt", "gave-up" or "".
	Outcome string `json:"outcome"`
	// Error is the retry message for the model (Invalid and Suppressed calls).
	Error string `json:"error"`
	// NativeIndex is the call's index in the turn's tool_calls (nil for recovered calls).
	NativeIndex *int `json:"nativeIndex"`
}

// Dispatchable says whether the call may be run (valid, repaired or recovered).
func (c *CallResult) Dispatchable() bool {
	return c.Status == StatusValid || c.Status == StatusRepaired || c.Status == StatusRecovered
}

// Has says whether a repair of kind was made.
func (c *CallResult) Has(kind string) bool {
	for _, r := range c.Repairs {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// SessionOptions tune a Session; 0 keeps the engine's default.
type SessionOptions struct {
	// Window and Threshold tune the storm breaker: the Threshold-th identical call within
	// Window calls is suppressed.
	Window    int `json:"window,omitempty"`
	Threshold int `json:"threshold,omitempty"`
	// MaxReprompts is the retries per invalid call (0 to 5); nil keeps the default.
	MaxReprompts *int `json:"maxReprompts,omitempty"`
}

// TurnOptions are the flags of one turn.
type TurnOptions struct {
	// FinishReason is the response's finish reason; "length" marks the last call cut off.
	FinishReason string `json:"finishReason,omitempty"`
	// NewUserTurn says the turn answers a new user message (the storm window starts afresh).
	NewUserTurn bool `json:"newUserTurn,omitempty"`
	// TurnID is something unique to the turn in its conversation (the response id): the ids
	// of calls recovered from the turn's text derive from it, with the session's turn number
	// and the text. Empty: from those two alone.
	TurnID string `json:"turnId,omitempty"`
}

// TurnResult is what RunTurn made of one assistant message.
type TurnResult struct {
	// Content is the content with recovered markup removed (nil when the message had none).
	Content *string `json:"content"`
	// Reasoning is the reasoning with recovered markup removed.
	Reasoning *string      `json:"reasoning"`
	Calls     []CallResult `json:"calls"`
	// Report is the turn's counts, as JSON.
	Report json.RawMessage `json:"report"`
}

// RecovererOptions configure a StreamRecoverer.
type RecovererOptions struct {
	// Channel is "content" (default) or "reasoning".
	Channel string `json:"channel,omitempty"`
	// MaxCalls bounds the calls recovered; 0 keeps the default.
	MaxCalls int `json:"maxCalls,omitempty"`
}

// RecoveredCall is one call found in text.
type RecoveredCall struct {
	Name               string  `json:"name"`
	WrittenName        *string `json:"writtenName"`
	Family             string  `json:"family"`
	Arguments          string  `json:"arguments"`
	ArgumentsUnwrapped bool    `json:"argumentsUnwrapped"`
	// Span is the [start, end) byte range of the markup in the whole streamed text.
	Span    [2]int `json:"span"`
	Channel string `json:"channel"`
}

// LostCall is a call of a declared tool in a recovered block that could not be read (a JSON
// call list or a Cohere action list entry whose arguments are no object): never recovered,
// never dropped silently.
type LostCall struct {
	Name   string `json:"name"`
	Family string `json:"family"`
	// Text is what could not be read, as written: the call's arguments, or its whole list entry.
	Text string `json:"text"`
	// Position is how many calls the stream released before it.
	Position int `json:"position"`
	// Span is the [start, end) byte range of its block, shared with the block's calls.
	Span    [2]int `json:"span"`
	Channel string `json:"channel"`
}

// Recovered is text with the markup of recovered calls removed, those calls, and the calls of
// their blocks that could not be read (Lost).
type Recovered struct {
	Text  string          `json:"text"`
	Calls []RecoveredCall `json:"calls"`
	Lost  []LostCall      `json:"lost"`
}

// MenderInfo is what a Mender validates against.
type MenderInfo struct {
	ToolNames []string `json:"toolNames"`
	// Rejected says why tool objects or schemas were refused (the rest are built regardless).
	Rejected []string `json:"rejected"`
}

// jsonText is v as JSON text: []byte, json.RawMessage and string are taken as written.
func jsonText(v any) ([]byte, error) {
	switch t := v.(type) {
	case []byte:
		return t, nil
	case json.RawMessage:
		return t, nil
	case string:
		return []byte(t), nil
	default:
		return json.Marshal(v)
	}
}
