"""Differential testing against kube-scheduler: seeded random clusters (`generate`) in the format of the
kube-oracle contract, wasmsched's side of a case (`local`), kube's (`oracle`), comparison and shrinking
(`compare`, `check`) and the `make fuzz-kube` driver (`fuzz`). Test code, not part of the package."""
