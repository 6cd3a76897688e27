//go:build !cgo

package toolmend

import (
	"errors"
	"strings"
	"testing"
)

// Without cgo every entry point reports ErrNoCgo, and the message names the proxy.
func TestWithoutCgoEveryFunctionNamesTheProxy(t *testing.T) {
	if _, err := New(`[]`, Options{}); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("New: %v", err)
	}
	if _, err := NewSession(SessionOptions{}); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("NewSession: %v", err)
	}
	if _, err := NewStreamRecoverer(`[]`, RecovererOptions{}); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("NewStreamRecoverer: %v", err)
	}
	var m *Mender
	if _, err := m.RepairCall("read", `{}`); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("RepairCall: %v", err)
	}
	if !strings.Contains(ErrNoCgo.Error(), "toolmend serve") {
		t.Fatalf("the error does not name `toolmend serve`: %v", ErrNoCgo)
	}
}
