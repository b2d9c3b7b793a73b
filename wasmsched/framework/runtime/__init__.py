"""The framework runtime, split as kube's pkg/scheduler/framework/runtime/:

- framework.py: the Framework (one per profile, the Handle its plugins get) and new_framework
- profile.py: the profile's plugins, one typed list per extension point (multiPoint expanded)
- enqueue.py, filter.py, score.py, binding.py: the extension points' runners, phase by phase
- plugin_timer.py: plugin durations in sampled cycles; instrumented.py: extension-point durations
- waiting_pods.py: pods held at Permit
"""

from wasmsched.framework.runtime.binding import MAX_TIMEOUT
from wasmsched.framework.runtime.enqueue import ALL_CLUSTER_EVENTS
from wasmsched.framework.runtime.framework import Framework, new_framework
from wasmsched.framework.runtime.profile import FrameworkError, PluginLists, PluginRef, ProfilePlugins

__all__ = [
    "ALL_CLUSTER_EVENTS",
    "MAX_TIMEOUT",
    "Framework",
    "FrameworkError",
    "PluginLists",
    "PluginRef",
    "ProfilePlugins",
    "new_framework",
]
