"""The Kubernetes object model: generated protobuf messages plus the helpers kube-scheduler uses on them
(quantities, label selectors, node affinity, taints, pod requests, manifest loading)."""
