package argv0

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestArgsNonEmptyAfterInit(t *testing.T) {
	if len(os.Args) == 0 || os.Args[0] == "" {
		t.Fatalf("os.Args = %q after init, want a program name", os.Args)
	}
	if Name != "wasm-guest" {
		t.Fatalf("Name = %q, want wasm-guest", Name)
	}
}

type marker struct{}

// TestInitsBeforeKlog: Go initialises ready packages in import-path order, so this package must sort
// before k8s.io/klog/v2, whose init indexes os.Args[0].
func TestInitsBeforeKlog(t *testing.T) {
	path := reflect.TypeOf(marker{}).PkgPath()
	if !strings.HasSuffix(path, "/internal/argv0") {
		t.Fatalf("unexpected package path %q", path)
	}
	if path >= "k8s.io/klog/v2" {
		t.Fatalf("package path %q does not sort before k8s.io/klog/v2", path)
	}
}
