//go:build cgo && !toolmend_system

package toolmend

// The static archive for this platform, built by `cargo build --release -p toolmend-ffi` and
// copied to lib/<GOOS>_<GOARCH>/ (release tags would carry them; see the README). The system
// libraries are what a Rust staticlib needs from libc.

/*
#cgo linux,amd64 LDFLAGS: ${SRCDIR}/lib/linux_amd64/libtoolmend_ffi.a -lm -ldl -lpthread
#cgo linux,arm64 LDFLAGS: ${SRCDIR}/lib/linux_arm64/libtoolmend_ffi.a -lm -ldl -lpthread
#cgo darwin,amd64 LDFLAGS: ${SRCDIR}/lib/darwin_amd64/libtoolmend_ffi.a -framework Security -framework CoreFoundation
#cgo darwin,arm64 LDFLAGS: ${SRCDIR}/lib/darwin_arm64/libtoolmend_ffi.a -framework Security -framework CoreFoundation
#cgo windows,amd64 LDFLAGS: ${SRCDIR}/lib/windows_amd64/libtoolmend_ffi.a -lws2_32 -luserenv -lntdll -lbcrypt
*/
import "C"
