package toolmend

import (
	"encoding/json"
	"sync"
)

// ToolDef is one tool of a harness's tool list: its name and JSON Schema parameters.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Registry maps tool names to Menders, built once from a harness's tool list, for
// docker-agent-style harnesses that unmarshal each call's arguments into the tool's typed
// parameters. Safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	menders map[string]*Mender
}

// NewRegistry builds one Mender per tool (a tool's schema is compiled once).
func NewRegistry(tools []ToolDef, opts Options) (*Registry, error) {
	r := &Registry{menders: make(map[string]*Mender, len(tools))}
	for _, tool := range tools {
		m, err := New([]ToolDef{tool}, opts)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.menders[tool.Name] = m
	}
	return r, nil
}

// Mender returns the tool's Mender (nil for a tool not in the list).
func (r *Registry) Mender(name string) *Mender {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.menders[name]
}

// Close frees every Mender.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.menders {
		m.Close()
	}
	r.menders = nil
	return nil
}

// Unmarshal is the repair step: a strict json.Unmarshal of arguments into dst first (valid
// calls cost nothing more); on failure RepairCall, then the repaired arguments unmarshalled
// into dst and returned; a call toolmend cannot save returns an *InvalidCallError whose
// message is the retry message for the model. An unknown tool, or an engine that is not
// there (no cgo), returns the strict unmarshal's own error: nothing is invented.
func (r *Registry) Unmarshal(name string, arguments []byte, dst any) ([]byte, error) {
	strictErr := json.Unmarshal(arguments, dst)
	if strictErr == nil {
		return arguments, nil
	}
	m := r.Mender(name)
	if m == nil {
		return arguments, strictErr
	}
	call, err := m.RepairCall(name, string(arguments))
	if err != nil {
		return arguments, strictErr
	}
	if !call.Dispatchable() {
		return arguments, &InvalidCallError{Name: name, Status: call.Status, Message: call.Error}
	}
	repaired := []byte(call.ArgumentsText)
	if err := json.Unmarshal(repaired, dst); err != nil {
		// The schema and the Go type disagree; the strict error is the honest one.
		return arguments, strictErr
	}
	return repaired, nil
}
