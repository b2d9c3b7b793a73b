// Package wire holds the byte layouts of ABI v2 values (docs/abi.md §14): the snapshot's change
// records, the overlay, and `bytes*` lists. The guest reads them; the fake host of hosttest writes
// them, with the same code, so tests exercise one definition of each layout.
package wire

import (
	"encoding/binary"
	"fmt"
)

// Record kinds of handle.snapshot.changes and handle.node_info.overlay (§14.1).
const (
	Node     byte = 0x01
	NodeGone byte = 0x02
	Pod      byte = 0x03
	PodGone  byte = 0x04
	Reset    byte = 0x05
	Sums     byte = 0x06
)

// Pod flags (§14.1): the pod is in kube's NodeInfo.PodsWithAffinity / PodsWithRequiredAntiAffinity.
const (
	FlagAffinity             byte = 1 << 0
	FlagRequiredAntiAffinity byte = 1 << 1
)

// AppendStr appends a `str`/`bytes` field: u32 LE length, then the bytes.
func AppendStr[T ~string | ~[]byte](b []byte, s T) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// AppendNode appends a NODE record.
func AppendNode(b []byte, name string, node, resources []byte) []byte {
	b = append(b, Node)
	b = AppendStr(b, name)
	b = AppendStr(b, node)
	return AppendStr(b, resources)
}

// AppendNodeGone appends a NODE_GONE record.
func AppendNodeGone(b []byte, name string) []byte { return AppendStr(append(b, NodeGone), name) }

// AppendPod appends a POD record.
func AppendPod(b []byte, node, key string, flags byte, pod []byte) []byte {
	b = append(b, Pod)
	b = AppendStr(b, node)
	b = AppendStr(b, key)
	b = append(b, flags)
	return AppendStr(b, pod)
}

// AppendPodGone appends a POD_GONE record.
func AppendPodGone(b []byte, node, key string) []byte {
	return AppendStr(AppendStr(append(b, PodGone), node), key)
}

// AppendSums appends the overlay's 0x06 record.
func AppendSums(b []byte, resources []byte) []byte { return AppendStr(append(b, Sums), resources) }

// Reader walks a value. A malformed value panics with a message naming what was being read: it is a
// host bug, and the guest cannot continue from a half-applied change.
type Reader struct {
	B    []byte
	What string
}

func (r *Reader) fail(what string) {
	panic(fmt.Sprintf("sdk: malformed %s from the host: truncated %s", r.What, what))
}

// Done reports whether every byte was read.
func (r *Reader) Done() bool { return len(r.B) == 0 }

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.B) < 1 {
		r.fail("byte")
	}
	c := r.B[0]
	r.B = r.B[1:]
	return c
}

// Bytes reads a `bytes` field; the result aliases the value.
func (r *Reader) Bytes() []byte {
	if len(r.B) < 4 {
		r.fail("length")
	}
	n := binary.LittleEndian.Uint32(r.B)
	if uint64(len(r.B)-4) < uint64(n) {
		r.fail("field")
	}
	v := r.B[4 : 4+n]
	r.B = r.B[4+n:]
	return v
}

// Str reads a `str` field.
func (r *Reader) Str() string { return string(r.Bytes()) }

// List splits a `bytes*` value into its entries, which alias it.
func List(b []byte, what string) [][]byte {
	r := Reader{B: b, What: what}
	var out [][]byte
	for !r.Done() {
		out = append(out, r.Bytes())
	}
	return out
}
