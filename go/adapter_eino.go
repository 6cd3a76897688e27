package toolmend

import (
	"context"
	"errors"
)

// InvalidCallError is a call toolmend could not save: Message is the retry message for the
// model (what CallResult.Error holds).
type InvalidCallError struct {
	Name    string
	Status  Status
	Message string
}

func (e *InvalidCallError) Error() string {
	return "toolmend: call of " + e.Name + " is " + string(e.Status) + ": " + e.Message
}

// ArgumentsHandler returns a function with exactly the shape of Eino's
// compose.ToolsNodeConfig.ToolArgumentsHandler: it repairs each call's arguments before the
// tool runs.
//
//	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
//		Tools:                tools,
//		ToolArgumentsHandler: mender.ArgumentsHandler(),
//	})
//
// Valid arguments pass as the same bytes, repaired ones as the repaired text; a call that
// cannot be saved returns an *InvalidCallError with the retry message. If the engine itself
// fails (a closed mender, a build without cgo), the arguments pass through unchanged: the
// adapter never loses what it got.
func (m *Mender) ArgumentsHandler() func(ctx context.Context, name, arguments string) (string, error) {
	return func(_ context.Context, name, arguments string) (string, error) {
		call, err := m.RepairCall(name, arguments)
		if err != nil {
			return arguments, nil
		}
		if !call.Dispatchable() {
			return "", &InvalidCallError{Name: name, Status: call.Status, Message: call.Error}
		}
		return call.ArgumentsText, nil
	}
}

// IsInvalidCall reports whether err is (or wraps) an *InvalidCallError, and returns it.
func IsInvalidCall(err error) (*InvalidCallError, bool) {
	var invalid *InvalidCallError
	ok := errors.As(err, &invalid)
	return invalid, ok
}
