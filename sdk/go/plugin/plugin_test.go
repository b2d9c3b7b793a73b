//go:build !wasip1

package plugin

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// No export package is linked into this test binary, so only plugins without extension points
// other than PreFilter can be registered.

type preFilterOnly struct{ config string }

func (preFilterOnly) PreFilter(api.CycleState, api.PodInfo) ([]string, *api.Status) { return nil, nil }

type filterPlugin struct{}

func (filterPlugin) Filter(api.CycleState, api.PodInfo, api.NodeInfo) *api.Status { return nil }

func panicText(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("expected a panic")
		}
		msg = fmt.Sprint(r)
	}()
	f()
	return ""
}

func TestSetPassesGuestConfig(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{Config: []byte(`{"x":1}`)})
	var got []byte
	Set(func(config []byte) (*preFilterOnly, error) {
		got = config
		return &preFilterOnly{config: string(config)}, nil
	})
	if string(got) != `{"x":1}` {
		t.Fatalf("constructor got config %q", got)
	}
}

func TestSetEmptyConfigIsNil(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{})
	called := false
	Set(func(config []byte) (preFilterOnly, error) {
		called = true
		if config != nil {
			t.Errorf("config %q, want nil", config)
		}
		return preFilterOnly{}, nil
	})
	if !called {
		t.Fatal("constructor not called")
	}
}

func TestSetPanicsOnConstructorError(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{})
	msg := panicText(t, func() {
		Set(func([]byte) (preFilterOnly, error) { return preFilterOnly{}, errors.New("bad config") })
	})
	if msg != "plugin.Set: bad config" {
		t.Fatalf("panic %q", msg)
	}
}

func TestSetPanicsOnMissingExportPackage(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{})
	msg := panicText(t, func() { Set(func([]byte) (filterPlugin, error) { return filterPlugin{}, nil }) })
	if !strings.Contains(msg, `"github.com/wasmsched/wasmsched/sdk/go/exports/filter"`) {
		t.Fatalf("panic %q does not name the export package", msg)
	}
	msg = panicText(t, func() { SetPlugin(filterPlugin{}) })
	if !strings.Contains(msg, "exports/filter") {
		t.Fatalf("SetPlugin panic %q does not name the export package", msg)
	}
}

func TestSetPluginAccepts(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{})
	SetPlugin(preFilterOnly{}) // must not panic
}
