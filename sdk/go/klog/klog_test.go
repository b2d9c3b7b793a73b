//go:build !wasip1

package klog

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"testing"

	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// install installs a host with the given logSeverity and forgets the cached threshold.
func install(t *testing.T, sev int32) *hosttest.Host {
	t.Helper()
	prev := threshold
	threshold.v, threshold.done = 0, false
	t.Cleanup(func() { threshold = prev })
	return hosttest.Install(t, &hosttest.Host{LogSeverity: sev})
}

func TestSeverityErrorSuppressesInfoAndWarning(t *testing.T) {
	h := install(t, 2)
	Info("info")
	Infof("infof %d", 1)
	InfoS("infos", "k", "v")
	Warning("warning")
	Error("error ", 1)
	ErrorS(errors.New("boom"), "errors", "k", "v")
	want := []hosttest.LogRecord{
		{Severity: 2, Msg: "error 1"},
		{Severity: 2, Msg: "errors", KVs: []byte("err\x00boom\x00k\x00v\x00")},
	}
	assertLogged(t, h.Logged, want)
}

func TestSeverityWarning(t *testing.T) {
	h := install(t, 1)
	Info("info")
	Warning("careful")
	assertLogged(t, h.Logged, []hosttest.LogRecord{{Severity: 1, Msg: "careful"}})
}

func TestSeverityInfoEmitsAll(t *testing.T) {
	h := install(t, 0)
	Info("a", 1, 2, "b")
	Infof("%s=%d", "x", 3)
	Warning("w")
	Error("e")
	assertLogged(t, h.Logged, []hosttest.LogRecord{
		{Severity: 0, Msg: "a1 2b"}, // fmt.Sprint spacing
		{Severity: 0, Msg: "x=3"},
		{Severity: 1, Msg: "w"},
		{Severity: 2, Msg: "e"},
	})
}

func TestSeverityCachedValueIsUsed(t *testing.T) {
	h := install(t, 0)
	threshold.v, threshold.done = 2, true // as after the first ask in a guest
	Info("dropped")
	InfoS("dropped")
	Error("kept")
	assertLogged(t, h.Logged, []hosttest.LogRecord{{Severity: 2, Msg: "kept"}})
}

func TestSeverityCachingFollowsBuild(t *testing.T) {
	h := install(t, 2)
	Info("dropped")
	if threshold.done != cacheSeverity {
		t.Fatalf("threshold.done = %v after the first ask, want cacheSeverity (%v)", threshold.done, cacheSeverity)
	}
	h.LogSeverity = 0
	Info("second")
	if cacheSeverity {
		assertLogged(t, h.Logged, nil)
	} else { // native: each test's host is asked again
		assertLogged(t, h.Logged, []hosttest.LogRecord{{Severity: 0, Msg: "second"}})
	}
}

// TestGuestCachesSeverity checks the wasip1 build's setting, which native tests cannot compile.
func TestGuestCachesSeverity(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "severity_wasip1.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range g.Specs {
			v, ok := s.(*ast.ValueSpec)
			if !ok || len(v.Names) != 1 || v.Names[0].Name != "cacheSeverity" || len(v.Values) != 1 {
				continue
			}
			found = true
			if id, ok := v.Values[0].(*ast.Ident); !ok || id.Name != "true" {
				t.Fatalf("wasip1 cacheSeverity = %#v, want true (the host's logSeverity is asked once)", v.Values[0])
			}
		}
	}
	if !found {
		t.Fatal("severity_wasip1.go declares no cacheSeverity")
	}
}

func TestInfoSKeepsEmptyValues(t *testing.T) {
	h := install(t, 0)
	InfoS("m", "k", "", "k2", "v2")
	assertLogged(t, h.Logged, []hosttest.LogRecord{{Severity: 0, Msg: "m", KVs: []byte("k\x00\x00k2\x00v2\x00")}})
}

func TestInfoSFormatsValues(t *testing.T) {
	h := install(t, 0)
	InfoS("m", "n", 3, "ok", true, "odd")
	assertLogged(t, h.Logged, []hosttest.LogRecord{{Severity: 0, Msg: "m", KVs: []byte("n\x003\x00ok\x00true\x00odd\x00")}})
}

func TestInfoSWithoutPairs(t *testing.T) {
	h := install(t, 0)
	InfoS("just a message")
	if len(h.Logged) != 1 || h.Logged[0].Msg != "just a message" || len(h.Logged[0].KVs) != 0 {
		t.Fatalf("logged %+v, want one message with no kvs", h.Logged)
	}
}

func TestErrorSPutsErrFirst(t *testing.T) {
	h := install(t, 0)
	ErrorS(errors.New("bad thing"), "failed", "pod", "ns/p")
	ErrorS(nil, "no error", "k", "v")
	assertLogged(t, h.Logged, []hosttest.LogRecord{
		{Severity: 2, Msg: "failed", KVs: []byte("err\x00bad thing\x00pod\x00ns/p\x00")},
		{Severity: 2, Msg: "no error", KVs: []byte("k\x00v\x00")},
	})
}

func TestSuppressedArgsNotFormatted(t *testing.T) {
	h := install(t, 2)
	Info(panicker{})
	Infof("%v", panicker{})
	InfoS("m", "k", panicker{})
	if len(h.Logged) != 0 {
		t.Fatalf("logged %+v", h.Logged)
	}
}

// panicker fails the test if a suppressed message is formatted.
type panicker struct{}

func (panicker) String() string { panic("formatted a suppressed message") }

func assertLogged(t *testing.T, got, want []hosttest.LogRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("logged %d records %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Severity != w.Severity || g.Msg != w.Msg || string(g.KVs) != string(w.KVs) ||
			(w.KVs == nil) != (g.KVs == nil) {
			t.Fatalf("record %d = {%d %q %q (nil %v)}, want {%d %q %q (nil %v)}", i, g.Severity, g.Msg, g.KVs,
				g.KVs == nil, w.Severity, w.Msg, w.KVs, w.KVs == nil)
		}
	}
}

// appendValue's shortcuts write what fmt.Append writes; other values go through fmt.
func TestAppendValueIsFmtAppend(t *testing.T) {
	type named string
	values := []any{"", "ns/p", 0, -7, int64(math.MinInt64), int32(math.MaxInt32), uint8(255), uint(7),
		uint64(math.MaxUint64), uint32(9), true, false, named("x"), stringer{}, errors.New("e"), 1.5, nil,
		[]string{"a"}}
	for _, v := range values {
		if got, want := string(appendValue([]byte("k="), v)), string(fmt.Append([]byte("k="), v)); got != want {
			t.Errorf("appendValue(%#v) = %q, want %q", v, got, want)
		}
	}
}

type stringer struct{}

func (stringer) String() string { return "from String" }
