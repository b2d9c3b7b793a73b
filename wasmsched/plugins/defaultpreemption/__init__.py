"""DefaultPreemption plugin (kube-scheduler's plugins/defaultpreemption)."""

from wasmsched.plugins.defaultpreemption.default_preemption import (
    NAME,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    new,
)

__all__ = ["NAME", "DefaultPreemption", "filter_pods_with_pdb_violation", "new"]
