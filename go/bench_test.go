//go:build cgo

package toolmend

import "testing"

// About 100 bytes each: a valid call (returned as sent) and one that needs a repair.
var benchCalls = []struct{ name, args string }{
	{"valid", `{"path": "/home/user/project/src/main.rs", "limit": 200, "offset": 10}`},
	{"repaired", `{"path": "/home/user/project/src/main.rs", "limit": "200", "offset": 10}`},
}

const benchTools = `[{"type": "function", "function": {"name": "read", "parameters": {"type": "object",
  "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "minimum": 0},
  "limit": {"type": "integer", "minimum": 1}}, "required": ["path"], "additionalProperties": false}}}]`

// BenchmarkRepairCall: go = RepairCall from Go (the crossing, the record out, Go reading it);
// rust = the same call looped in Rust; rust+record = that plus Rust writing the ABI's record.
// Ratios: go/rust is the goal (≤ 1.5 on these ~100 B calls); see bench.sh.
func BenchmarkRepairCall(b *testing.B) {
	m, err := New(benchTools, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for _, c := range benchCalls {
		b.Run(c.name+"/go", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := m.RepairCall("read", c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/rust", func(b *testing.B) {
			if err := rustRepairCalls(m, "read", c.args, b.N, false); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(c.name+"/rust+record", func(b *testing.B) {
			if err := rustRepairCalls(m, "read", c.args, b.N, true); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkCrossing is the cgo crossing alone: a call into the archive that does nothing.
func BenchmarkCrossing(b *testing.B) { crossOnce(b.N) }

// BenchmarkRepairCallParallel: every P calls RepairCall on one shared Mender.
func BenchmarkRepairCallParallel(b *testing.B) {
	m, err := New(benchTools, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.RepairCall("read", benchCalls[1].args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
