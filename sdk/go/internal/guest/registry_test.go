//go:build !wasip1

package guest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/sdk/go/api"
)

type filterOnly struct{}

func (filterOnly) Filter(api.CycleState, api.PodInfo, api.NodeInfo) *api.Status { return nil }

type scoreOnly struct{}

func (scoreOnly) Score(api.CycleState, api.PodInfo, api.NodeInfo) (int64, *api.Status) { return 0, nil }

type scoreAndNormalize struct{ scoreOnly }

func (scoreAndNormalize) NormalizeScore(api.CycleState, api.PodInfo, []api.NodeScore) *api.Status {
	return nil
}

// preFilterOnly needs no export package: prefilter is always exported by package plugin.
type preFilterOnly struct{}

func (preFilterOnly) PreFilter(api.CycleState, api.PodInfo) ([]string, *api.Status) { return nil, nil }

func TestSetFailsWhenExportNotLinked(t *testing.T) {
	setLinked(t)
	setPlugin(t, nil)
	err := Set(filterOnly{})
	if err == nil {
		t.Fatal("Set accepted a FilterPlugin without exports/filter linked")
	}
	for _, want := range []string{`"github.com/wasmsched/wasmsched/sdk/go/exports/filter"`, "api.FilterPlugin",
		"guest.filterOnly"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %s", err, want)
		}
	}
	if Plugin != nil {
		t.Fatalf("a failed Set registered %T", Plugin)
	}
}

func TestSetFailsWhenLinkedButNotImplemented(t *testing.T) {
	setLinked(t, "score")
	setPlugin(t, nil)
	err := Set(filterOnly{})
	if err == nil {
		t.Fatal("Set accepted a plugin missing score and filter")
	}
	msg := err.Error()
	for _, want := range []string{
		`package "github.com/wasmsched/wasmsched/sdk/go/exports/score" is imported`, "api.ScorePlugin",
		`"github.com/wasmsched/wasmsched/sdk/go/exports/filter"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %s", msg, want)
		}
	}
}

func TestSetNormalizeScoreNeedsItsOwnPackage(t *testing.T) {
	setLinked(t, "score")
	setPlugin(t, nil)
	err := Set(scoreAndNormalize{})
	if err == nil || !strings.Contains(err.Error(), "exports/normalizescore") {
		t.Fatalf("Set(score+normalize) with only score linked: %v", err)
	}
}

func TestSetSucceedsWhenLinksMatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      api.Plugin
		linked []string
	}{
		{"filter", filterOnly{}, []string{"filter"}},
		{"score+normalize", scoreAndNormalize{}, []string{"score", "normalizescore"}},
		{"prefilter only", preFilterOnly{}, nil},
		{"everything", &fakePlugin{}, []string{"enqueue", "prefilterextensions", "filter", "postfilter", "prescore",
			"score", "normalizescore", "reserve", "permit", "prebind", "bind", "postbind", "preenqueue", "queuesort"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setLinked(t, tc.linked...)
			setPlugin(t, nil)
			if err := Set(tc.p); err != nil {
				t.Fatalf("Set: %v", err)
			}
			if Plugin != tc.p {
				t.Fatalf("Plugin = %v, want the plugin given to Set", Plugin)
			}
		})
	}
}

func TestSetNil(t *testing.T) {
	setLinked(t)
	if err := Set(nil); err == nil {
		t.Fatal("Set(nil) succeeded")
	}
}

func TestLink(t *testing.T) {
	setLinked(t)
	Link("permit")
	if !linked["permit"] || len(linked) != 1 {
		t.Fatalf("linked = %v after Link(permit)", linked)
	}
	msg := mustPanic(t, func() { Link("nosuch") })
	if !strings.Contains(msg, "nosuch") {
		t.Fatalf("panic %q does not name the package", msg)
	}
}

// TestPointsMatchExportPackages checks the table against the tree: each package path exists and its
// link.go links the point's own name.
func TestPointsMatchExportPackages(t *testing.T) {
	if len(points) != 14 {
		t.Fatalf("%d points, want 14 export packages", len(points))
	}
	for name, pt := range points {
		src, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(pt.pkg), "link.go"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := `guest.Link("` + name + `")`; !strings.Contains(string(src), want) {
			t.Errorf("%s/link.go does not call %s", pt.pkg, want)
		}
		if !pt.implemented(&fakePlugin{}) {
			t.Errorf("fakePlugin does not implement %s", pt.iface)
		}
		if pt.implemented(struct{}{}) {
			t.Errorf("an empty struct implements %s", pt.iface)
		}
	}
}
