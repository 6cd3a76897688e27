//go:build !cgo

package toolmend

import "encoding/json"

// Without cgo the engine is not linked: every function returns ErrNoCgo.

func engineVersion() string { return "" }

// Mender is a compiled tool list; without cgo it cannot be made (New returns ErrNoCgo).
type Mender struct{}

// New returns ErrNoCgo: this build has no cgo.
func New(tools any, opts Options) (*Mender, error) { return nil, ErrNoCgo }

// Info returns nothing without cgo.
func (m *Mender) Info() MenderInfo { return MenderInfo{} }

// Close does nothing without cgo.
func (m *Mender) Close() error { return nil }

// RepairCall returns ErrNoCgo.
func (m *Mender) RepairCall(name, arguments string) (CallResult, error) {
	return CallResult{}, ErrNoCgo
}

// RunTurn returns ErrNoCgo.
func (m *Mender) RunTurn(session *Session, message any, opts TurnOptions) (TurnResult, error) {
	return TurnResult{}, ErrNoCgo
}

// Stats returns ErrNoCgo.
func (m *Mender) Stats() (json.RawMessage, error) { return nil, ErrNoCgo }

// Session is a conversation's state; without cgo it cannot be made.
type Session struct{}

// NewSession returns ErrNoCgo.
func NewSession(opts SessionOptions) (*Session, error) { return nil, ErrNoCgo }

// NewUserTurn returns ErrNoCgo.
func (s *Session) NewUserTurn() error { return ErrNoCgo }

// Close does nothing without cgo.
func (s *Session) Close() error { return nil }

// StreamRecoverer recovers calls from streamed text; without cgo it cannot be made.
type StreamRecoverer struct{}

// NewStreamRecoverer returns ErrNoCgo.
func NewStreamRecoverer(tools any, opts RecovererOptions) (*StreamRecoverer, error) {
	return nil, ErrNoCgo
}

// Feed returns ErrNoCgo.
func (r *StreamRecoverer) Feed(chunk string) (Recovered, error) { return Recovered{}, ErrNoCgo }

// Finish returns ErrNoCgo.
func (r *StreamRecoverer) Finish() (Recovered, error) { return Recovered{}, ErrNoCgo }

// Close does nothing without cgo.
func (r *StreamRecoverer) Close() error { return nil }
