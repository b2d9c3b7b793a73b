"""Differential testing against kube-scheduler: seeded random clusters (`generate`) in the format of the
kube-oracle contract."""
