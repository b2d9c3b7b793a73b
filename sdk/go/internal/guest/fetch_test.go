//go:build !wasip1

package guest

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// getter serves val with the buf/buf_limit protocol (docs/abi.md §5) and records each buf_limit.
func getter(val []byte, limits *[]int) func([]byte) uint32 {
	return func(buf []byte) uint32 {
		*limits = append(*limits, len(buf))
		if len(val) <= len(buf) {
			copy(buf, val)
		}
		return uint32(len(val))
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

func TestFetchRetriesWhenValueExceedsScratch(t *testing.T) {
	resetScratch(t)
	val := pattern(5000)
	var limits []int
	got := fetch(getter(val, &limits))
	if !bytes.Equal(got, val) {
		t.Fatalf("fetch returned %d bytes, want the host's 5000 exactly", len(got))
	}
	if want := []int{2048, 5000}; !slices.Equal(limits, want) {
		t.Fatalf("getter limits = %v, want %v (scratch, then the value's size)", limits, want)
	}
}

func TestFetchOneByteOverScratch(t *testing.T) {
	resetScratch(t)
	val := pattern(2049)
	var limits []int
	if got := fetch(getter(val, &limits)); !bytes.Equal(got, val) {
		t.Fatalf("fetch returned %d bytes, want 2049", len(got))
	}
	if want := []int{2048, 2049}; !slices.Equal(limits, want) {
		t.Fatalf("getter limits = %v, want %v", limits, want)
	}
}

func TestFetchFitsScratchInOneCall(t *testing.T) {
	resetScratch(t)
	val := pattern(2048)
	var limits []int
	got := fetch(getter(val, &limits))
	if !bytes.Equal(got, val) {
		t.Fatalf("fetch returned %d bytes, want the 2048 sent", len(got))
	}
	if want := []int{2048}; !slices.Equal(limits, want) {
		t.Fatalf("getter limits = %v, want %v", limits, want)
	}
}

func TestFetchEmptyIsNil(t *testing.T) {
	resetScratch(t)
	var limits []int
	if got := fetch(getter(nil, &limits)); got != nil {
		t.Fatalf("fetch of an empty value = %q, want nil", got)
	}
	if len(limits) != 1 {
		t.Fatalf("getter called %d times for an empty value, want 1", len(limits))
	}
}

func TestFetchPanicsWhenHostGrowsTheValue(t *testing.T) {
	resetScratch(t)
	calls := 0
	grow := func(buf []byte) uint32 {
		calls++
		return uint32(3000 * calls) // 3000, then 6000: breaks §5 stability
	}
	msg := mustPanic(t, func() { fetch(grow) })
	if !strings.Contains(msg, "changed size") {
		t.Fatalf("panic %q does not explain the size change", msg)
	}
}

func TestFetchStringCopies(t *testing.T) {
	resetScratch(t)
	var limits []int
	s := fetchString(getter([]byte("node-1"), &limits))
	fetch(getter([]byte("XXXXXX"), &limits)) // overwrites the scratch buffer
	if s != "node-1" {
		t.Fatalf("fetchString = %q after a later fetch, want %q", s, "node-1")
	}
}

func TestFetchKeepsTheGrownBufferForTheNextCycle(t *testing.T) {
	resetScratch(t)
	val := pattern(5000)
	var limits []int
	fetch(getter(val, &limits))
	if got := fetch(getter(val, &limits)); !bytes.Equal(got, val) {
		t.Fatalf("second fetch returned %d bytes, want 5000", len(got))
	}
	if want := []int{2048, 5000, 5000}; !slices.Equal(limits, want) {
		t.Fatalf("getter limits = %v, want %v (the second fetch fits the grown scratch)", limits, want)
	}
	huge := pattern(maxScratch + 1)
	limits = nil
	fetch(getter(huge, &limits))
	fetch(getter(huge, &limits))
	if want := []int{5000, maxScratch + 1, 5000, maxScratch + 1}; !slices.Equal(limits, want) {
		t.Fatalf("getter limits = %v, want %v (a value over maxScratch is not kept)", limits, want)
	}
}
