//go:build cgo

package toolmend

/*
#include <stdlib.h>
#include "toolmend.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"unsafe"
)

// The link-time version check: toolmend_version_0_1_0_abi2 exists only in a 0.1.0 archive of
// ABI revision 2.
func engineVersion() string { return C.GoString(C.toolmend_version_0_1_0_abi2()) }

// bytesArg is the pointer and length of b for C (the bytes hold no Go pointers).
func bytesArg(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b))), C.size_t(len(b))
}

// stringArg is the pointer and length of s for C.
func stringArg(s string) (*C.uint8_t, C.size_t) {
	if len(s) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

// finish reads a function's buffer (with read, while the buffer is alive), frees it, and
// turns a non-OK status into an *Error.
func finish(op string, status C.ToolmendStatus, buf C.ToolmendBuf, read func([]byte) error) error {
	defer C.toolmend_buf_free(buf)
	var data []byte
	if buf.ptr != nil {
		data = unsafe.Slice((*byte)(unsafe.Pointer(buf.ptr)), int(buf.len))
	}
	switch status {
	case C.TOOLMEND_OK:
		if read == nil {
			return nil
		}
		return read(data)
	case C.TOOLMEND_PANIC:
		return &Error{Op: op, Message: string(data), Panic: true}
	default:
		return &Error{Op: op, Message: string(data)}
	}
}

// Mender is a compiled tool list and its repair pipeline; safe for concurrent use.
// Close frees it (a finalizer frees a forgotten one).
type Mender struct {
	mu     sync.RWMutex
	handle *C.ToolmendMender
	info   MenderInfo
}

// New compiles a tool list (OpenAI, flat or Anthropic tool objects). tools is JSON text
// ([]byte, json.RawMessage or string) or any value encoding/json turns into a JSON array.
// Tool objects it cannot read are listed by Info().Rejected; the rest are built regardless.
func New(tools any, opts Options) (*Mender, error) {
	text, err := jsonText(tools)
	if err != nil {
		return nil, &Error{Op: "New", Message: "tools: " + err.Error()}
	}
	optText, err := json.Marshal(opts)
	if err != nil {
		return nil, &Error{Op: "New", Message: err.Error()}
	}
	tp, tl := bytesArg(text)
	op, ol := bytesArg(optText)
	var handle *C.ToolmendMender
	var buf C.ToolmendBuf
	status := C.toolmend_mender_new(tp, tl, op, ol, &handle, &buf)
	runtime.KeepAlive(text)
	runtime.KeepAlive(optText)
	m := &Mender{}
	if err := finish("New", status, buf, func(b []byte) error { return json.Unmarshal(b, &m.info) }); err != nil {
		C.toolmend_mender_free(handle)
		return nil, err
	}
	m.handle = handle
	runtime.SetFinalizer(m, (*Mender).Close)
	return m, nil
}

// Info returns the tool names the mender validates against and the tools it refused.
func (m *Mender) Info() MenderInfo { return m.info }

// Close frees the mender; later calls return ErrClosed. It waits for calls in flight.
func (m *Mender) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.handle != nil {
		C.toolmend_mender_free(m.handle)
		m.handle = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// RepairCall validates one call's raw arguments text against the tool's schema and repairs
// only what failed. A broken call is not an error: it comes back Invalid with Error set.
func (m *Mender) RepairCall(name, arguments string) (CallResult, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.handle == nil {
		return CallResult{}, ErrClosed
	}
	np, nl := stringArg(name)
	ap, al := stringArg(arguments)
	// A record, returned by value: no Go pointer crosses, and a valid call's has no body.
	r := C.toolmend_mender_repair_call(m.handle, np, nl, ap, al)
	runtime.KeepAlive(name)
	runtime.KeepAlive(arguments)
	var body []byte
	if r.body.ptr != nil {
		defer C.toolmend_buf_free(r.body)
		body = unsafe.Slice((*byte)(unsafe.Pointer(r.body.ptr)), int(r.body.len))
	}
	if r.code != C.TOOLMEND_OK {
		return CallResult{}, &Error{Op: "RepairCall", Message: string(body), Panic: r.code == C.TOOLMEND_PANIC}
	}
	var result CallResult
	head := callHead{status: uint8(r.status), origin: uint8(r.origin), outcome: uint8(r.outcome), flags: uint8(r.flags)}
	if err := result.readRecord(head, body, name, arguments); err != nil {
		return CallResult{}, err
	}
	return result, nil
}

// RunTurn runs one OpenAI-style assistant message (content, reasoning_content, tool_calls
// with id, function.name, function.arguments) through every stage with the session's state.
// message is JSON text or any value encoding/json can encode.
func (m *Mender) RunTurn(session *Session, message any, opts TurnOptions) (TurnResult, error) {
	msg, err := jsonText(message)
	if err != nil {
		return TurnResult{}, &Error{Op: "RunTurn", Message: "message: " + err.Error()}
	}
	request, err := json.Marshal(struct {
		Message json.RawMessage `json:"message"`
		TurnOptions
	}{msg, opts})
	if err != nil {
		return TurnResult{}, &Error{Op: "RunTurn", Message: "message: " + err.Error()}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.handle == nil {
		return TurnResult{}, ErrClosed
	}
	session.mu.RLock()
	defer session.mu.RUnlock()
	if session.handle == nil {
		return TurnResult{}, ErrClosed
	}
	rp, rl := bytesArg(request)
	var buf C.ToolmendBuf
	status := C.toolmend_mender_run_turn(m.handle, session.handle, rp, rl, &buf)
	runtime.KeepAlive(request)
	var result TurnResult
	err = finish("RunTurn", status, buf, func(b []byte) error {
		return json.Unmarshal(b, &result)
	})
	return result, err
}

// Stats returns the counters since the mender was built, as JSON.
func (m *Mender) Stats() (json.RawMessage, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.handle == nil {
		return nil, ErrClosed
	}
	var buf C.ToolmendBuf
	status := C.toolmend_mender_stats(m.handle, &buf)
	var stats json.RawMessage
	err := finish("Stats", status, buf, func(b []byte) error {
		stats = append(json.RawMessage(nil), b...)
		return nil
	})
	return stats, err
}

// Session is a conversation's storm window and retry budget, shared by its turns.
type Session struct {
	mu     sync.RWMutex
	handle *C.ToolmendSession
}

// NewSession makes a session.
func NewSession(opts SessionOptions) (*Session, error) {
	optText, err := json.Marshal(opts)
	if err != nil {
		return nil, &Error{Op: "NewSession", Message: err.Error()}
	}
	op, ol := bytesArg(optText)
	var handle *C.ToolmendSession
	var buf C.ToolmendBuf
	status := C.toolmend_session_new(op, ol, &handle, &buf)
	runtime.KeepAlive(optText)
	if err := finish("NewSession", status, buf, nil); err != nil {
		C.toolmend_session_free(handle)
		return nil, err
	}
	s := &Session{handle: handle}
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

// NewUserTurn starts the storm window afresh (the retry budget is kept).
func (s *Session) NewUserTurn() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.handle == nil {
		return ErrClosed
	}
	var buf C.ToolmendBuf
	return finish("NewUserTurn", C.toolmend_session_new_user_turn(s.handle, &buf), buf, nil)
}

// Close frees the session.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle != nil {
		C.toolmend_session_free(s.handle)
		s.handle = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// StreamRecoverer recovers calls from text that arrives in chunks: Feed returns the text
// safe to show now and the calls completed so far; Finish the rest. One per channel and
// message.
type StreamRecoverer struct {
	mu     sync.Mutex
	handle *C.ToolmendRecoverer
}

// NewStreamRecoverer makes a recoverer for a tool list (as New takes it).
func NewStreamRecoverer(tools any, opts RecovererOptions) (*StreamRecoverer, error) {
	text, err := jsonText(tools)
	if err != nil {
		return nil, &Error{Op: "NewStreamRecoverer", Message: "tools: " + err.Error()}
	}
	optText, err := json.Marshal(opts)
	if err != nil {
		return nil, &Error{Op: "NewStreamRecoverer", Message: err.Error()}
	}
	tp, tl := bytesArg(text)
	op, ol := bytesArg(optText)
	var handle *C.ToolmendRecoverer
	var buf C.ToolmendBuf
	status := C.toolmend_recoverer_new(tp, tl, op, ol, &handle, &buf)
	runtime.KeepAlive(text)
	runtime.KeepAlive(optText)
	if err := finish("NewStreamRecoverer", status, buf, nil); err != nil {
		C.toolmend_recoverer_free(handle)
		return nil, err
	}
	r := &StreamRecoverer{handle: handle}
	runtime.SetFinalizer(r, (*StreamRecoverer).Close)
	return r, nil
}

// Feed adds a chunk of text; it returns what may be released now.
func (r *StreamRecoverer) Feed(chunk string) (Recovered, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handle == nil {
		return Recovered{}, ErrClosed
	}
	cp, cl := stringArg(chunk)
	var buf C.ToolmendBuf
	status := C.toolmend_recoverer_feed(r.handle, cp, cl, &buf)
	runtime.KeepAlive(chunk)
	return readRecovered("Feed", status, buf)
}

// Finish ends the text; it returns the rest (text held back, calls completed at the end).
func (r *StreamRecoverer) Finish() (Recovered, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handle == nil {
		return Recovered{}, ErrClosed
	}
	var buf C.ToolmendBuf
	return readRecovered("Finish", C.toolmend_recoverer_finish(r.handle, &buf), buf)
}

func readRecovered(op string, status C.ToolmendStatus, buf C.ToolmendBuf) (Recovered, error) {
	var out Recovered
	err := finish(op, status, buf, func(b []byte) error { return json.Unmarshal(b, &out) })
	return out, err
}

// Close frees the recoverer.
func (r *StreamRecoverer) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handle != nil {
		C.toolmend_recoverer_free(r.handle)
		r.handle = nil
		runtime.SetFinalizer(r, nil)
	}
	return nil
}
