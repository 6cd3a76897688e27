//go:build cgo

package toolmend

/*
#include "toolmend.h"
*/
import "C"

import "runtime"

// Benchmark helpers (cgo cannot be used in _test.go files).

// crossOnce makes n calls into the archive that do nothing (the cgo crossing alone).
func crossOnce(n int) {
	for i := 0; i < n; i++ {
		C.toolmend_version_0_1_0_abi2()
	}
}

// rustRepairCalls runs the same RepairCall n times inside Rust (encode: also writing the
// ABI's record each time), for the benchmark's reference.
func rustRepairCalls(m *Mender, name, arguments string, n int, encode bool) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	np, nl := stringArg(name)
	ap, al := stringArg(arguments)
	flag := C.int32_t(0)
	if encode {
		flag = 1
	}
	var buf C.ToolmendBuf
	status := C.toolmend_bench_repair_call(m.handle, np, nl, ap, al, C.uint64_t(n), flag, &buf)
	runtime.KeepAlive(name)
	runtime.KeepAlive(arguments)
	return finish("bench", status, buf, nil)
}
