// Package toolmend repairs the tool calls LLMs get wrong, in process, over the toolmend
// engine's C ABI (crates/toolmend-ffi), linked with cgo from a static archive.
//
// A Mender compiles a tool list once and is safe to share across goroutines:
//
//	m, err := toolmend.New(tools, toolmend.Options{})
//	call, err := m.RepairCall("read", `{"path": "/a", "limit": "10"}`)
//	if call.Dispatchable() { run(call.Name, call.ArgumentsText) } else { retry(call.Error) }
//
// Valid arguments come back as the same bytes; a repaired call changes only what failed; a
// call that cannot be saved is Invalid with Error set to the retry message for the model.
//
// Linking: by default the archive is read from lib/<GOOS>_<GOARCH>/libtoolmend_ffi.a in
// this folder; with the build tag toolmend_system it is found by the system linker
// (-ltoolmend_ffi). Without cgo every function returns ErrNoCgo: use `toolmend serve`.
package toolmend
