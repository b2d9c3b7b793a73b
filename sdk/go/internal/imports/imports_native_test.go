//go:build !wasip1

package imports

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

func install(t *testing.T, h *Host) *Host {
	t.Helper()
	prev := Fake
	Fake = h
	t.Cleanup(func() { Fake = prev })
	return h
}

// The fake must follow docs/abi.md §5 exactly, or SDK tests would pass against a host that does not exist.
func TestGetterProtocol(t *testing.T) {
	h := install(t, &Host{Config: []byte("abcdef")})

	small := bytes.Repeat([]byte{0xEE}, 5)
	if n := GetConfig(small); n != 6 {
		t.Fatalf("GetConfig(5-byte buf) = %d, want the full length 6", n)
	}
	if !bytes.Equal(small, bytes.Repeat([]byte{0xEE}, 5)) {
		t.Fatalf("a too-small buffer was written: %q", small)
	}

	big := bytes.Repeat([]byte{0xEE}, 8)
	if n := GetConfig(big); n != 6 {
		t.Fatalf("GetConfig(8-byte buf) = %d, want 6", n)
	}
	if want := append([]byte("abcdef"), 0xEE, 0xEE); !bytes.Equal(big, want) {
		t.Fatalf("buffer %q, want %q (bytes after the value untouched)", big, want)
	}
	if n := GetConfig(nil); n != 6 {
		t.Fatalf("GetConfig(nil) = %d, want 6", n)
	}
	if h.Calls["get_config"] != 3 {
		t.Fatalf("get_config counted %d calls, want 3", h.Calls["get_config"])
	}

	h.Config = nil
	if n := GetConfig(big); n != 0 {
		t.Fatalf("empty config: %d", n)
	}
}

func TestNodeImageStatesUnknownIsNull(t *testing.T) {
	install(t, &Host{ImageStates: map[string][]byte{"n1": []byte(`{}`)}})
	buf := make([]byte, 16)
	if n := NodeImageStates("n1", buf); string(buf[:n]) != "{}" {
		t.Fatalf("n1: %q", buf[:n])
	}
	if n := NodeImageStates("zz", buf); string(buf[:n]) != "null" {
		t.Fatalf("unknown node: %q, want null", buf[:n])
	}
	if n := Node("zz", buf); n != 0 {
		t.Fatalf("unknown node: node() = %d, want 0", n)
	}
}

func TestFakeGetWaitingPod(t *testing.T) {
	pod := []byte{0x0a, 0x02, 'h', 'i'}
	install(t, &Host{WaitingPods: map[string][]byte{"u": pod}})

	out := bytes.Repeat([]byte{0xEE}, 8)
	GetWaitingPod("nope", out)
	if !bytes.Equal(out, make([]byte, 8)) {
		t.Fatalf("not found wrote % x, want 8 zeros", out)
	}

	out = bytes.Repeat([]byte{0xEE}, 8)
	GetWaitingPod("u", out)
	if want := []byte{0x0a, 0x02, 'h', 'i', 0, 0xEE, 0xEE, 0xEE}; !bytes.Equal(out, want) {
		t.Fatalf("found wrote % x, want % x", out, want)
	}

	out = bytes.Repeat([]byte{0xEE}, 4)
	GetWaitingPod("u", out)
	if want := []byte{0x0a, 0x02, 'h', 'i'}; !bytes.Equal(out, want) {
		t.Fatalf("exact fit wrote % x, want % x", out, want)
	}

	long := bytes.Repeat([]byte{1}, 20)
	install(t, &Host{WaitingPods: map[string][]byte{"u": long}})
	out = bytes.Repeat([]byte{0xEE}, 10)
	GetWaitingPod("u", out)
	if binary.LittleEndian.Uint32(out) != 0xFFFFFFFF || binary.LittleEndian.Uint32(out[4:]) != 20 ||
		out[8] != 0xEE || out[9] != 0xEE {
		t.Fatalf("too small wrote % x, want FF FF FF FF 14 00 00 00", out)
	}
}

func TestFakeRejectWaitingPod(t *testing.T) {
	h := install(t, &Host{WaitingPods: map[string][]byte{"u": {0x0a, 0}}})
	out := bytes.Repeat([]byte{0xEE}, 8)
	RejectWaitingPod("u", out)
	if binary.LittleEndian.Uint64(out) != 1 || len(h.Rejected) != 1 {
		t.Fatalf("reject known: % x, rejected %v", out, h.Rejected)
	}
	RejectWaitingPod("nope", out)
	if binary.LittleEndian.Uint64(out) != 0 || len(h.Rejected) != 1 {
		t.Fatalf("reject unknown: % x, rejected %v", out, h.Rejected)
	}
	short := []byte{0xEE, 0xEE}
	RejectWaitingPod("u", short) // rejects, writes nothing
	if short[0] != 0xEE || len(h.Rejected) != 2 {
		t.Fatalf("reject with a short buffer: % x, rejected %v", short, h.Rejected)
	}
}

func TestResultsAreCopied(t *testing.T) {
	h := install(t, &Host{})
	b := []byte("a\x00")
	ResultNodeNames(b)
	b[0] = 'z'
	if string(h.NodeNames) != "a\x00" {
		t.Fatalf("node names alias the guest's buffer: %q", h.NodeNames)
	}
}

func TestNoHostPanicsForGetters(t *testing.T) {
	install(t, nil)
	defer func() {
		if r := recover(); r == nil || !bytes.Contains([]byte(fmt.Sprint(r)), []byte("hosttest.Install")) {
			t.Fatalf("panic %v, want one naming hosttest.Install", r)
		}
	}()
	CurrentPod(nil)
}

func TestNoHostLogging(t *testing.T) {
	install(t, nil)
	if Severity() != 0 {
		t.Fatalf("Severity() without a host = %d, want 0", Severity())
	}
	Log(0, "logged to stderr without a host") // must not panic
	Logs(2, "m", []byte("k\x00v\x00"))
}
