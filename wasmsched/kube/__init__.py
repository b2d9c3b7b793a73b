"""The real-cluster side: a Kubernetes API server as the scheduler's source of objects and target of
writes (`wasmsched run`, `wasmsched snapshot`)."""
