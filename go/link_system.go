//go:build cgo && toolmend_system

package toolmend

// -tags toolmend_system: libtoolmend_ffi comes from the system (a distribution package, or
// CGO_LDFLAGS=-L<dir>), found by the linker's search path.

/*
#cgo LDFLAGS: -ltoolmend_ffi -lm -ldl -lpthread
*/
import "C"
