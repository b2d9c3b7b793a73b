package guest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wasmsched/wasmsched/sdk/go/api"
)

// Plugin is the plugin given to plugin.Set.
var Plugin api.Plugin

// point is an extension point served by an export package of the SDK.
type point struct {
	pkg         string // import path below the SDK module
	iface       string
	implemented func(api.Plugin) bool
}

var points = map[string]point{
	"enqueue": {"exports/enqueue", "api.EnqueueExtensions or framework.EnqueueExtensions",
		func(p api.Plugin) bool {
			_, ok := p.(api.EnqueueExtensions)
			return ok || EnqueueV2 != nil && EnqueueV2.Implemented(p)
		}},
	"preenqueue": {"exports/preenqueue", "api.PreEnqueuePlugin",
		func(p api.Plugin) bool { _, ok := p.(api.PreEnqueuePlugin); return ok }},
	"queuesort": {"exports/queuesort", "api.QueueSortPlugin",
		func(p api.Plugin) bool { _, ok := p.(api.QueueSortPlugin); return ok }},
	"prefilterextensions": {"exports/prefilterextensions", "api.PreFilterExtensions",
		func(p api.Plugin) bool { _, ok := p.(api.PreFilterExtensions); return ok }},
	"filter": {"exports/filter", "api.FilterPlugin",
		func(p api.Plugin) bool { _, ok := p.(api.FilterPlugin); return ok }},
	"postfilter": {"exports/postfilter", "api.PostFilterPlugin",
		func(p api.Plugin) bool { _, ok := p.(api.PostFilterPlugin); return ok }},
	"prescore": {"exports/prescore", "api.PreScorePlugin",
		func(p api.Plugin) bool { _, ok := p.(api.PreScorePlugin); return ok }},
	"score": {"exports/score", "api.ScorePlugin",
		func(p api.Plugin) bool { _, ok := p.(api.ScorePlugin); return ok }},
	"normalizescore": {"exports/normalizescore", "api.ScoreExtensions",
		func(p api.Plugin) bool { _, ok := p.(api.ScoreExtensions); return ok }},
	"reserve": {"exports/reserve", "api.ReservePlugin",
		func(p api.Plugin) bool { _, ok := p.(api.ReservePlugin); return ok }},
	"permit": {"exports/permit", "api.PermitPlugin",
		func(p api.Plugin) bool { _, ok := p.(api.PermitPlugin); return ok }},
	"prebind": {"exports/prebind", "api.PreBindPlugin",
		func(p api.Plugin) bool { _, ok := p.(api.PreBindPlugin); return ok }},
	"bind": {"exports/bind", "api.BindPlugin",
		func(p api.Plugin) bool { _, ok := p.(api.BindPlugin); return ok }},
	"postbind": {"exports/postbind", "api.PostBindPlugin",
		func(p api.Plugin) bool { _, ok := p.(api.PostBindPlugin); return ok }},
}

// linked holds the export packages compiled into this guest.
var linked = map[string]bool{}

// Link is called by each export package's init: its exports are in the module.
func Link(name string) {
	if _, ok := points[name]; !ok {
		panic("sdk: unknown export package " + name)
	}
	linked[name] = true
}

const modulePath = "github.com/wasmsched/wasmsched/sdk/go/"

// Set registers p after checking that the linked export packages are exactly the extension
// points p implements: the host activates an extension point when its export exists, so a missing
// package would silently never call p and an extra one would call a plugin that cannot answer.
// PreFilter is always exported, by package plugin, because it starts every cycle.
func Set(p api.Plugin) error {
	if p == nil {
		return fmt.Errorf("sdk: plugin.Set(nil)")
	}
	var problems []string
	for name, pt := range points {
		impl := pt.implemented(p)
		switch {
		case impl && !linked[name]:
			problems = append(problems, fmt.Sprintf("%T implements %s, but its exports are not linked: "+
				"add `import _ %q` to the main package", p, pt.iface, modulePath+pt.pkg))
		case !impl && linked[name]:
			problems = append(problems, fmt.Sprintf("package %q is imported, but %T does not implement %s",
				modulePath+pt.pkg, p, pt.iface))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("sdk: plugin.Set: %s", strings.Join(problems, "; "))
	}
	register(p)
	return nil
}

// scorer and filterer are Plugin as the two per-node points, asserted once: Filter and Score run
// once per node, and an interface assertion per call shows in a wasm guest's profile.
var (
	scorer   api.ScorePlugin
	filterer api.FilterPlugin
)

func register(p api.Plugin) {
	Plugin = p
	scorer, _ = p.(api.ScorePlugin)
	filterer, _ = p.(api.FilterPlugin)
}
