//go:build cgo

package toolmend

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The corpus files, in the order every file is run (sessions are per file).
var corpusFiles = []string{"valid", "salvage", "session", "shape", "turn", "recover"}

// corpusLine is what the Go side reads of a corpus line (the CLI reads the whole line).
type corpusLine struct {
	ID           string          `json:"id"`
	Session      string          `json:"session"`
	Model        string          `json:"model"`
	Tools        json.RawMessage `json:"tools"`
	Message      json.RawMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
	NewUserTurn  bool            `json:"new_user_turn"`
	Options      struct {
		Recover      string `json:"recover"`
		MaxReprompts *int   `json:"max_reprompts"`
	} `json:"options"`
}

// cliCall is a call of `toolmend turns`'s output line (the library's serde form).
type cliCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Origin    string          `json:"origin"`
	Status    Status          `json:"status"`
	Arguments json.RawMessage `json:"arguments"`
	Repairs   []Repair        `json:"repairs"`
	Notes     []string        `json:"notes"`
	Outcome   *string         `json:"outcome"`
	Error     *string         `json:"error"`
}

type cliLine struct {
	ID      string `json:"id"`
	Error   string `json:"error"`
	Message struct {
		ToolCalls []struct {
			Function struct {
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Calls []cliCall `json:"calls"`
}

// toolmendBin is the CLI the Go results are compared with ($TOOLMEND_BIN, or a cargo build).
func toolmendBin(t *testing.T) string {
	if bin := os.Getenv("TOOLMEND_BIN"); bin != "" {
		return bin
	}
	for _, dir := range []string{os.Getenv("CARGO_TARGET_DIR"), "../target"} {
		for _, profile := range []string{"release", "debug"} {
			bin := filepath.Join(dir, profile, "toolmend")
			if dir != "" && fileExists(bin) {
				return bin
			}
		}
	}
	t.Fatal("no toolmend CLI: set TOOLMEND_BIN (cargo build --bin toolmend)")
	return ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runCLI runs `toolmend turns` on a corpus file; one output line per input line.
func runCLI(t *testing.T, bin, path string) []cliLine {
	cmd := exec.Command(bin, "turns", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolmend turns %s: %v\n%s", path, err, stderr.String())
	}
	var lines []cliLine
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(nil, 64<<20)
	for scanner.Scan() {
		var l cliLine
		if err := json.Unmarshal(scanner.Bytes(), &l); err != nil {
			t.Fatalf("CLI output line: %v", err)
		}
		lines = append(lines, l)
	}
	return lines
}

func readCorpus(t *testing.T, path string) []corpusLine {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []corpusLine
	for _, raw := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var l corpusLine
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		lines = append(lines, l)
	}
	return lines
}

// Every corpus line through RunTurn gives the CLI's calls: same status, arguments, repairs,
// notes, outcome and retry message; valid calls come back as the bytes sent.
func TestCorpusMatchesTheCLI(t *testing.T) {
	bin := toolmendBin(t)
	compared := 0
	for _, file := range corpusFiles {
		path := filepath.Join("..", "corpus", file+".jsonl")
		lines := readCorpus(t, path)
		want := runCLI(t, bin, path)
		if len(want) != len(lines) {
			t.Fatalf("%s: %d lines in, %d out", file, len(lines), len(want))
		}
		menders := map[string]*Mender{}
		sessions := map[string]*Session{}
		for i, line := range lines {
			got := runLine(t, line, menders, sessions)
			compareCalls(t, line.ID, got.Calls, want[i].Calls)
			if file == "valid" {
				checkValidBytes(t, line, got, want[i])
			}
			compared++
		}
		for _, m := range menders {
			m.Close()
		}
		for _, s := range sessions {
			s.Close()
		}
	}
	if compared < 600 {
		t.Fatalf("only %d corpus lines compared", compared)
	}
	t.Logf("%d corpus lines equal to the CLI's", compared)
}

// runLine runs one line as the CLI does: a mender per (recover, model, tools), a session per
// `session` key.
func runLine(t *testing.T, line corpusLine, menders map[string]*Mender, sessions map[string]*Session) TurnResult {
	recover := line.Options.Recover
	key := recover + "\x00" + line.Model + "\x00" + string(line.Tools)
	m := menders[key]
	if m == nil {
		var err error
		m, err = New([]byte(line.Tools), Options{Recover: recover, Model: line.Model})
		if err != nil {
			t.Fatalf("%s: %v", line.ID, err)
		}
		menders[key] = m
	}
	s := sessions[line.Session]
	if s == nil {
		var err error
		s, err = NewSession(SessionOptions{MaxReprompts: line.Options.MaxReprompts})
		if err != nil {
			t.Fatalf("%s: %v", line.ID, err)
		}
		sessions[line.Session] = s
	}
	r, err := m.RunTurn(s, []byte(line.Message), TurnOptions{FinishReason: line.FinishReason, NewUserTurn: line.NewUserTurn, TurnID: line.ID})
	if err != nil {
		t.Fatalf("%s: %v", line.ID, err)
	}
	return r
}

func compareCalls(t *testing.T, id string, got []CallResult, want []cliCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d calls, the CLI %d", id, len(got), len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		mismatch := g.ID != w.ID || g.Name != w.Name || g.Origin != w.Origin || g.Status != w.Status ||
			!sameJSON(g.Arguments, w.Arguments) || fmt.Sprint(g.Repairs) != fmt.Sprint(w.Repairs) ||
			fmt.Sprint(g.Notes) != fmt.Sprint(w.Notes) || g.Outcome != deref(w.Outcome) ||
			g.Error != deref(w.Error)
		if mismatch {
			t.Errorf("%s call %d:\n go  %+v\n cli %+v", id, i, g, w)
		}
	}
}

// sameJSON says whether two JSON texts are the same value (numbers compared as written);
// nil and null are the same.
func sameJSON(a, b json.RawMessage) bool {
	read := func(raw json.RawMessage) (any, bool) {
		if len(raw) == 0 {
			return nil, true
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		err := d.Decode(&v)
		return v, err == nil
	}
	av, aok := read(a)
	bv, bok := read(b)
	return aok && bok && reflect.DeepEqual(normalNumbers(av), normalNumbers(bv))
}

// normalNumbers spells every number one way (`1E-2` and `1e-2` are one value).
func normalNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(t)); ok {
			return r.RatString()
		}
		return string(t)
	case []any:
		for i := range t {
			t[i] = normalNumbers(t[i])
		}
	case map[string]any:
		for k := range t {
			t[k] = normalNumbers(t[k])
		}
	}
	return v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkValidBytes: a valid call's text is the bytes sent, through Go (RunTurn and
// RepairCall) and through the CLI.
func checkValidBytes(t *testing.T, line corpusLine, got TurnResult, want cliLine) {
	t.Helper()
	var msg struct {
		ToolCalls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(line.Message, &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.ToolCalls) == 0 || len(got.Calls) != len(msg.ToolCalls) ||
		len(want.Message.ToolCalls) != len(msg.ToolCalls) {
		t.Errorf("%s: %d calls sent, %d from Go, %d from the CLI", line.ID, len(msg.ToolCalls),
			len(got.Calls), len(want.Message.ToolCalls))
		return
	}
	m, err := New([]byte(line.Tools), Options{Model: line.Model})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i, sent := range msg.ToolCalls {
		args := sent.Function.Arguments
		one, err := m.RepairCall(sent.Function.Name, args)
		if err != nil {
			t.Fatal(err)
		}
		if got.Calls[i].Status != StatusValid || got.Calls[i].ArgumentsText != args ||
			one.Status != StatusValid || one.ArgumentsText != args ||
			want.Message.ToolCalls[i].Function.Arguments != args {
			t.Errorf("%s call %d: not the bytes sent:\n sent %q\n turn %q (%s)\n call %q (%s)\n cli  %q",
				line.ID, i, args, got.Calls[i].ArgumentsText, got.Calls[i].Status, one.ArgumentsText,
				one.Status, want.Message.ToolCalls[i].Function.Arguments)
		}
	}
}

// cliRepair is `toolmend repair --json`'s output: the library's serde form and the text.
type cliRepair struct {
	cliCall
	ArgumentsText string `json:"arguments_text"`
}

// Every native call of the corpus through RepairCall (the record) gives what `toolmend repair
// --json` gives for it: valid, repaired and refused calls alike, the text byte for byte.
func TestRepairCallMatchesTheCLI(t *testing.T) {
	bin := toolmendBin(t)
	dir := t.TempDir()
	compared, statuses := 0, map[Status]int{}
	for _, file := range corpusFiles {
		for n, line := range readCorpus(t, filepath.Join("..", "corpus", file+".jsonl")) {
			var msg struct {
				ToolCalls []struct {
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			}
			if json.Unmarshal(line.Message, &msg) != nil || len(msg.ToolCalls) == 0 {
				continue
			}
			tools := filepath.Join(dir, fmt.Sprintf("%s-%d.json", file, n))
			if err := os.WriteFile(tools, line.Tools, 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := New([]byte(line.Tools), Options{Model: line.Model})
			if err != nil {
				t.Fatalf("%s: %v", line.ID, err)
			}
			for i, sent := range msg.ToolCalls {
				name, args := sent.Function.Name, sent.Function.Arguments
				want, ok := runCLIRepair(t, bin, tools, name, line.Model, args)
				if !ok {
					continue // not a tool of the list: the CLI refuses it before repairing
				}
				got, err := m.RepairCall(name, args)
				if err != nil {
					t.Fatalf("%s call %d: %v", line.ID, i, err)
				}
				compareCalls(t, fmt.Sprintf("%s call %d (RepairCall)", line.ID, i), []CallResult{got}, []cliCall{want.cliCall})
				if got.ArgumentsText != want.ArgumentsText {
					t.Errorf("%s call %d: text %q, the CLI %q", line.ID, i, got.ArgumentsText, want.ArgumentsText)
				}
				if got.Status == StatusValid && got.ArgumentsText != args {
					t.Errorf("%s call %d: valid but not the bytes sent: %q", line.ID, i, got.ArgumentsText)
				}
				compared++
				statuses[got.Status]++
			}
			m.Close()
		}
	}
	if compared < 400 || statuses[StatusValid] == 0 || statuses[StatusRepaired] == 0 || statuses[StatusInvalid] == 0 {
		t.Fatalf("only %d calls compared (%v)", compared, statuses)
	}
	t.Logf("%d calls equal to the CLI's (%v)", compared, statuses)
}

// runCLIRepair runs `toolmend repair --json` on one call (the arguments on stdin, as sent);
// false when the CLI refused the call before repairing it (no such tool).
func runCLIRepair(t *testing.T, bin, tools, name, model, args string) (cliRepair, bool) {
	t.Helper()
	cmd := exec.Command(bin, "repair", "--schema", tools, "--tool", name, "--model", model, "--json")
	cmd.Stdin = strings.NewReader(args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.Output() // exit 1 for a call it could not save, with the result printed
	var r cliRepair
	if len(bytes.TrimSpace(out)) == 0 {
		return r, false
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("toolmend repair %s: %v\n%s\n%s", name, err, out, stderr.String())
	}
	return r, true
}
