//go:build cgo

package toolmend

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

const readTools = `[{"type": "function", "function": {"name": "read", "parameters": {"type": "object",
  "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
  "required": ["path"], "additionalProperties": false}}}]`

func newReadMender(t testing.TB) *Mender {
	t.Helper()
	m, err := New(readTools, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestVersionIsTheLinkedArchive(t *testing.T) {
	if got := engineVersion(); got != Version {
		t.Fatalf("archive version %q, package %q", got, Version)
	}
}

func TestValidCallIsTheSameBytes(t *testing.T) {
	m := newReadMender(t)
	args := "{ \"path\" :\"/a\",\n \"limit\": 10 }"
	c, err := m.RepairCall("read", args)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != StatusValid || c.ArgumentsText != args || len(c.Repairs) != 0 {
		t.Fatalf("got %+v", c)
	}
	if !c.Dispatchable() || c.Name != "read" {
		t.Fatalf("got %+v", c)
	}
}

func TestBrokenCallIsRepaired(t *testing.T) {
	m := newReadMender(t)
	c, err := m.RepairCall("read", `{"path": "/a", "limit": "10"}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != StatusRepaired || c.ArgumentsText != `{"path":"/a","limit":10}` {
		t.Fatalf("got %+v", c)
	}
	if !c.Has("string_to_number") && len(c.Repairs) == 0 {
		t.Fatalf("no repair reported: %+v", c)
	}
	if string(c.Arguments) != `{"path":"/a","limit":10}` {
		t.Fatalf("arguments %s", c.Arguments)
	}
}

func TestUnsavableCallIsInvalidWithRetryMessage(t *testing.T) {
	m := newReadMender(t)
	c, err := m.RepairCall("read", `{"limit": 3}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != StatusInvalid || c.Error == "" || c.Dispatchable() {
		t.Fatalf("got %+v", c)
	}
}

func TestBadToolsAndOptionsAreErrors(t *testing.T) {
	var e *Error
	if _, err := New(`{"not": "a list"}`, Options{}); !errors.As(err, &e) || e.Panic {
		t.Fatalf("got %v", err)
	}
	if _, err := New(`[`, Options{}); !errors.As(err, &e) || !strings.Contains(e.Message, "JSON") {
		t.Fatalf("got %v", err)
	}
	if _, err := New(readTools, Options{Recover: "sometimes"}); !errors.As(err, &e) ||
		!strings.Contains(e.Message, "recover") {
		t.Fatalf("got %v", err)
	}
}

func TestInfoListsToolsAndRejections(t *testing.T) {
	m, err := New(`[{"name": "ok", "parameters": {"type": "object"}}, {"nameless": true}]`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	info := m.Info()
	if len(info.ToolNames) != 1 || info.ToolNames[0] != "ok" || len(info.Rejected) != 1 {
		t.Fatalf("got %+v", info)
	}
}

func TestClosedMenderReportsErrClosed(t *testing.T) {
	m, err := New(readTools, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	m.Close()
	if _, err := m.RepairCall("read", `{}`); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
}

func TestRunTurnRepairsAndKeepsSessionState(t *testing.T) {
	m := newReadMender(t)
	s, err := NewSession(SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := map[string]any{"content": "", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
		"function": map[string]any{"name": "read", "arguments": `{"path": "/a", "limit": "2"}`}}}}
	r, err := m.RunTurn(s, msg, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Calls) != 1 || r.Calls[0].Status != StatusRepaired || r.Calls[0].ID != "c1" ||
		r.Calls[0].NativeIndex == nil || *r.Calls[0].NativeIndex != 0 || len(r.Report) == 0 {
		t.Fatalf("got %+v", r)
	}
	// The storm breaker: the same call again and again within one user turn is suppressed.
	var last Status
	for i := 0; i < 4; i++ {
		r, err = m.RunTurn(s, msg, TurnOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = r.Calls[0].Status
	}
	if last != StatusSuppressed {
		t.Fatalf("the session kept no state: last status %q", last)
	}
	if err := s.NewUserTurn(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RunTurn(s, `{"tool_calls": [{"function": {}}]}`, TurnOptions{}); err == nil {
		t.Fatal("a call without a name was accepted")
	}
}

func TestStreamRecovererFindsCallsAcrossChunks(t *testing.T) {
	r, err := NewStreamRecoverer(readTools, RecovererOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	text := `Reading. <tool_call>{"name": "read", "arguments": {"path": "/a"}}</tool_call> done`
	var shown strings.Builder
	var calls []RecoveredCall
	for i := 0; i < len(text); i += 7 {
		out, err := r.Feed(text[i:min(i+7, len(text))])
		if err != nil {
			t.Fatal(err)
		}
		shown.WriteString(out.Text)
		calls = append(calls, out.Calls...)
	}
	out, err := r.Finish()
	if err != nil {
		t.Fatal(err)
	}
	shown.WriteString(out.Text)
	calls = append(calls, out.Calls...)
	if len(calls) != 1 || calls[0].Name != "read" || calls[0].Channel != "content" ||
		strings.Contains(shown.String(), "tool_call") {
		t.Fatalf("shown %q, calls %+v", shown.String(), calls)
	}
	if _, err := r.Finish(); err == nil {
		t.Fatal("Finish twice was accepted")
	}
}

// A list entry whose arguments cannot be read is listed as lost, once, in its place, for any
// chunking; its neighbours are recovered.
func TestStreamRecovererListsALostEntry(t *testing.T) {
	entry := `{"tool_name": "read", "parameters": "a.rs"}`
	text := `Reading. <|START_ACTION|>[{"tool_name": "read", "parameters": {"path": "a"}}, ` + entry +
		`, {"tool_name": "read", "parameters": {"path": "b"}}]<|END_ACTION|>`
	for _, size := range []int{1, 7, 64, len(text)} {
		r, err := NewStreamRecoverer(readTools, RecovererOptions{Channel: "reasoning"})
		if err != nil {
			t.Fatal(err)
		}
		var calls []RecoveredCall
		var lost []LostCall
		take := func(out Recovered, err error) {
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, out.Calls...)
			lost = append(lost, out.Lost...)
		}
		for i := 0; i < len(text); i += size {
			take(r.Feed(text[i:min(i+size, len(text))]))
		}
		take(r.Finish())
		r.Close()
		want := LostCall{Name: "read", Family: "cohere", Text: entry, Position: 1, Channel: "reasoning"}
		if len(calls) != 2 || len(lost) != 1 {
			t.Fatalf("chunks of %d: calls %+v, lost %+v", size, calls, lost)
		}
		want.Span = calls[0].Span
		if lost[0] != want || !strings.HasPrefix(text[want.Span[0]:], "<|START_ACTION|>") {
			t.Fatalf("chunks of %d: lost %+v, want %+v", size, lost[0], want)
		}
	}
}

// Many goroutines share one Mender; each gets its own call's answer.
func TestManyGoroutinesShareOneMender(t *testing.T) {
	m := newReadMender(t)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				path := fmt.Sprintf("/g%d/%d", g, i)
				c, err := m.RepairCall("read", fmt.Sprintf(`{"path": %q, "limit": "%d"}`, path, i+1))
				if err != nil {
					errs <- err
					return
				}
				var args struct {
					Path  string
					Limit int
				}
				if err := json.Unmarshal([]byte(c.ArgumentsText), &args); err != nil ||
					c.Status != StatusRepaired || args.Path != path || args.Limit != i+1 {
					errs <- fmt.Errorf("goroutine %d call %d: %+v", g, i, c)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	stats, err := m.Stats()
	if err != nil || !strings.Contains(string(stats), "6400") {
		t.Fatalf("stats %s (%v)", stats, err)
	}
}
