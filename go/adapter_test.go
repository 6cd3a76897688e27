//go:build cgo

package toolmend

import (
	"context"
	"encoding/json"
	"testing"
)

func TestArgumentsHandlerRepairsOrRefuses(t *testing.T) {
	h := newReadMender(t).ArgumentsHandler()
	got, err := h(context.Background(), "read", `{"path": "/a", "limit": "3"}`)
	if err != nil || got != `{"path":"/a","limit":3}` {
		t.Fatalf("got %q, %v", got, err)
	}
	valid := `{"path" : "/a"}`
	if got, err := h(context.Background(), "read", valid); err != nil || got != valid {
		t.Fatalf("valid call changed: %q, %v", got, err)
	}
	if _, err := h(context.Background(), "read", `{"limit": 3}`); err == nil {
		t.Fatal("an unsavable call passed")
	} else if invalid, ok := IsInvalidCall(err); !ok || invalid.Message == "" {
		t.Fatalf("got %v", err)
	}
}

// The docker-agent-style step: strict unmarshal, RepairCall on failure, the retry message
// as the error.
func TestRegistryUnmarshalRepairsIntoTheTypedArguments(t *testing.T) {
	var defs []ToolDef
	if err := json.Unmarshal([]byte(`[{"name": "read", "parameters": {"type": "object",
		"properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
		"required": ["path"]}}, {"name": "shell", "parameters": {"type": "object",
		"properties": {"cmd": {"type": "array", "items": {"type": "string"}}}, "required": ["cmd"]}}]`), &defs); err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(defs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	type readArgs struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
	var args readArgs
	valid := []byte(`{"path": "/a", "limit": 2}`)
	if out, err := reg.Unmarshal("read", valid, &args); err != nil || string(out) != string(valid) {
		t.Fatalf("valid: %s, %v", out, err)
	}
	args = readArgs{}
	out, err := reg.Unmarshal("read", []byte(`{"path": "/b", "limit": "7"}`), &args)
	if err != nil || args.Path != "/b" || args.Limit != 7 || string(out) != `{"path":"/b","limit":7}` {
		t.Fatalf("repair: %s, %+v, %v", out, args, err)
	}
	if _, err := reg.Unmarshal("read", []byte(`{"path": "/c", "limit": "many"}`), &readArgs{}); err == nil {
		t.Fatal("a limit that is no number passed")
	} else if _, ok := IsInvalidCall(err); !ok {
		t.Fatalf("not the retry message: %v", err)
	}
	var shell struct {
		Cmd []string `json:"cmd"`
	}
	if _, err := reg.Unmarshal("shell", []byte(`{"cmd": "ls"}`), &shell); err != nil || len(shell.Cmd) != 1 {
		t.Fatalf("shell: %+v, %v", shell, err)
	}
	if _, err := reg.Unmarshal("unknown", []byte(`{"x": `), &shell); err == nil {
		t.Fatal("an unknown tool's broken call passed")
	}
}
