import pytest

from wasmsched.api import errors
from wasmsched.api.errors import ApiError
from wasmsched.api.types import Pod, PodDisruptionBudget, ReplicaSet, Service
from wasmsched.embedded.memory import AdmissionError, ConflictError, MemoryCluster, NotFoundError
from wasmsched.testing.builders import make_node, make_pod, make_priority_class


def test_create_bumps_resource_version_and_notifies_watchers() -> None:
    c = MemoryCluster()
    seen: list[tuple[str, str]] = []
    c.watch("Node", lambda o: seen.append(("add", o.metadata.name)),
            lambda old, new: seen.append(("update", new.metadata.resourceVersion)),
            lambda o: seen.append(("delete", o.metadata.name)))
    n = c.create(make_node("n1").obj())
    rv1 = n.metadata.resourceVersion
    n2 = make_node("n1").label("a", "b").obj()
    c.update(n2)
    c.delete("Node", "n1")
    assert seen == [("add", "n1"), ("update", n2.metadata.resourceVersion), ("delete", "n1")]
    assert int(n2.metadata.resourceVersion) > int(rv1)


def test_watch_replays_existing_objects() -> None:
    c = MemoryCluster()
    c.create(make_node("n1").obj())
    seen: list[str] = []
    c.watch("Node", lambda o: seen.append(o.metadata.name))
    assert seen == ["n1"]


def test_duplicate_create_is_a_conflict() -> None:
    c = MemoryCluster()
    c.create(make_node("n1").obj())
    with pytest.raises(ConflictError) as e:
        c.create(make_node("n1").obj())
    # kube-apiserver's answer: 409 AlreadyExists, which is_already_exists and not is_conflict
    assert (e.value.status, e.value.reason) == (409, "AlreadyExists")
    assert errors.is_already_exists(e.value) and not errors.is_conflict(e.value)


def test_admission_resolves_priority_class_and_policy() -> None:
    c = MemoryCluster()
    c.create(make_priority_class("high", 1000, preemption_policy="Never"))
    pod = make_pod("p").obj()
    pod.spec.priorityClassName = "high"
    c.create(pod)
    assert pod.spec.priority == 1000
    assert pod.spec.preemptionPolicy == "Never"


def test_admission_uses_global_default_class() -> None:
    c = MemoryCluster()
    c.create(make_priority_class("default", 7, global_default=True))
    pod = make_pod("p").obj()
    c.create(pod)
    assert (pod.spec.priority, pod.spec.priorityClassName) == (7, "default")
    assert pod.spec.preemptionPolicy == "PreemptLowerPriority"


def test_admission_takes_the_lowest_of_several_global_defaults() -> None:
    c = MemoryCluster()
    for name, value in (("b", 9), ("a", 3), ("c", 5)):
        c.create(make_priority_class(name, value, global_default=True))
    pod = c.create(make_pod("p").obj())
    assert (pod.spec.priority, pod.spec.priorityClassName) == (3, "a")


def test_admission_accepts_the_priority_it_would_compute() -> None:
    # A pod exported from a cluster carries what admission stored: accepted as it is.
    c = MemoryCluster()
    c.create(make_priority_class("high", 1000, preemption_policy="Never"))
    pod = c.create(make_pod("p").priority_class("high").priority(1000).obj())
    assert (pod.spec.priority, pod.spec.preemptionPolicy) == (1000, "Never")
    plain = c.create(make_pod("q").priority(0).obj())
    assert (plain.spec.priority, plain.spec.preemptionPolicy) == (0, "PreemptLowerPriority")


@pytest.mark.parametrize(("pod", "message"), [
    (make_pod("p").priority(1000).obj(),
     'pods "p" is forbidden: the integer value of priority (1000) must not be provided in pod spec; priority '
     "admission controller computed 0 from the given PriorityClass name"),
    (make_pod("p").priority_class("high").priority(5).obj(),
     'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority '
     "admission controller computed 1000 from the given PriorityClass name"),
    (make_pod("p").priority_class("high").obj(), ""),
    (make_pod("p").priority_class("never").obj(), ""),
])
def test_admission_refuses_a_priority_the_class_does_not_give(pod: Pod, message: str) -> None:
    c = MemoryCluster()
    c.create(make_priority_class("high", 1000))
    c.create(make_priority_class("never", 10, preemption_policy="Never"))
    if not message:
        c.create(pod)
        return
    with pytest.raises(AdmissionError) as e:
        c.create(pod)
    assert str(e.value) == message
    # the Priority plugin answers as admission.NewForbidden does
    assert (e.value.status, e.value.reason) == (403, "Forbidden") and errors.is_forbidden(e.value)


@pytest.mark.parametrize(("class_name", "computed"), [("", "PreemptLowerPriority"), ("high", "PreemptLowerPriority"),
                                                      ("never", "Never")])
def test_admission_refuses_a_preemption_policy_the_class_does_not_give(class_name: str, computed: str) -> None:
    c = MemoryCluster()
    c.create(make_priority_class("high", 1000))
    c.create(make_priority_class("never", 10, preemption_policy="Never"))
    pod = (make_pod("p").priority_class(class_name) if class_name else make_pod("p")).obj()
    pod.spec.preemptionPolicy = "Never" if computed != "Never" else "PreemptLowerPriority"
    with pytest.raises(AdmissionError) as e:
        c.create(pod)
    given = pod.spec.preemptionPolicy
    assert str(e.value) == (f'pods "p" is forbidden: the string value of PreemptionPolicy ({given}) must not be '
                            f"provided in pod spec; priority admission controller computed {computed} from the given "
                            "PriorityClass name")


def test_admission_rejects_unknown_priority_class() -> None:
    c = MemoryCluster()
    pod = make_pod("p").obj()
    pod.spec.priorityClassName = "nope"
    with pytest.raises(AdmissionError, match="no PriorityClass with name nope was found"):
        c.create(pod)


def test_admission_defaults_requests_from_limits() -> None:
    c = MemoryCluster()
    pod = make_pod("p").req(memory="1Gi").obj()
    pod.spec.containers[0].resources.limits["cpu"].string = "2"
    pod.spec.containers[0].resources.limits["memory"].string = "4Gi"
    c.create(pod)
    reqs = pod.spec.containers[0].resources.requests
    assert reqs["cpu"].string == "2"
    assert reqs["memory"].string == "1Gi"  # an explicit request wins over the limit


def test_bind_sets_node_and_condition_and_rejects_double_binding() -> None:
    c = MemoryCluster()
    c.create(make_node("n1").obj())
    pod = make_pod("p").obj()
    c.create(pod)
    c.bind(pod, "n1")
    bound = c.get_pod("default", "p")
    assert bound is not None and bound.spec.nodeName == "n1"
    assert [(x.type, x.status) for x in bound.status.conditions] == [("PodScheduled", "True")]
    with pytest.raises(ConflictError) as e:
        c.bind(pod, "n1")
    assert (e.value.status, e.value.reason) == (409, "Conflict") and errors.is_conflict(e.value)


def test_bind_clears_the_nomination_and_starts_the_pod_when_asked() -> None:
    """The API server clears nominatedNodeName on binding (ClearingNominatedNodeNameAfterBinding); with
    start_pods_on_bind the pod also gets status.startTime, as a kubelet starting it at once would."""
    for clock, want_start in ((None, None), (lambda: 1_704_067_200.25, (1_704_067_200, 250_000_000))):
        c = MemoryCluster(start_pods_on_bind=clock)
        c.create(make_node("n1").obj())
        pod = make_pod("p").nominated_node("n1").obj()
        c.create(pod)
        c.bind(pod, "n1")
        bound = c.get_pod("default", "p")
        assert bound is not None and bound.status.nominatedNodeName == ""
        if want_start is None:
            assert not bound.status.HasField("startTime")
        else:
            assert (bound.status.startTime.seconds, bound.status.startTime.nanos) == want_start


def test_bind_to_missing_node_or_pod_fails() -> None:
    c = MemoryCluster()
    pod = make_pod("p").obj()
    with pytest.raises(NotFoundError) as e:
        c.bind(pod, "n1")
    assert (e.value.status, e.value.reason) == (404, "NotFound") and errors.is_not_found(e.value)
    c.create(pod)
    with pytest.raises(NotFoundError):
        c.bind(pod, "n1")


def test_delete_pod_records_reason() -> None:
    c = MemoryCluster()
    pod = make_pod("p").node("n1").obj()
    c.create(pod)
    c.delete_pod(pod, "PreemptionByScheduler")
    assert c.get_pod("default", "p") is None
    assert c.deleted_pods == {"default/p": "PreemptionByScheduler"}


def test_namespace_labels_include_the_name_label() -> None:
    c = MemoryCluster()
    assert c.get_namespace_labels("x") == {"kubernetes.io/metadata.name": "x"}


def test_pdb_status_is_derived_from_running_pods() -> None:
    c = MemoryCluster()
    for i in range(3):
        c.create(make_pod(f"p{i}").label("app", "a").node("n1").obj())
    c.create(make_pod("pending").label("app", "a").obj())
    pdb = PodDisruptionBudget()
    pdb.metadata.name, pdb.metadata.namespace = "b", "default"
    pdb.spec.selector.matchLabels["app"] = "a"
    pdb.spec.minAvailable.intVal = 2
    c.create(pdb)
    (got,) = c.list_pod_disruption_budgets()
    assert (got.status.expectedPods, got.status.currentHealthy, got.status.desiredHealthy,
            got.status.disruptionsAllowed) == (3, 3, 2, 1)


def test_pdb_max_unavailable_percent_rounds_up() -> None:
    c = MemoryCluster()
    for i in range(3):
        c.create(make_pod(f"p{i}").label("app", "a").node("n1").obj())
    pdb = PodDisruptionBudget()
    pdb.metadata.name, pdb.metadata.namespace = "b", "default"
    pdb.spec.selector.matchLabels["app"] = "a"
    pdb.spec.maxUnavailable.type = 1
    pdb.spec.maxUnavailable.strVal = "50%"
    c.create(pdb)
    (got,) = c.list_pod_disruption_budgets()
    assert got.status.disruptionsAllowed == 2


def test_pdb_with_explicit_status_is_kept() -> None:
    c = MemoryCluster()
    pdb = PodDisruptionBudget()
    pdb.metadata.name, pdb.metadata.namespace = "b", "default"
    pdb.status.disruptionsAllowed = 5
    c.create(pdb)
    (got,) = c.list_pod_disruption_budgets()
    assert got.status.disruptionsAllowed == 5


def test_list_in_namespace_filters_kind_and_namespace() -> None:
    c = MemoryCluster()
    assert c.list_in_namespace("Service", "default") == []
    for ns, name in [("default", "a"), ("other", "b"), ("default", "c")]:
        s = Service()
        s.metadata.namespace, s.metadata.name = ns, name
        c.create(s)
    rs = ReplicaSet()
    rs.metadata.namespace, rs.metadata.name = "default", "a"
    c.create(rs)
    assert [s.metadata.name for s in c.list_in_namespace("Service", "default")] == ["a", "c"]
    assert [s.metadata.name for s in c.list_in_namespace("ReplicaSet", "default")] == ["a"]
    assert c.list_in_namespace("StatefulSet", "default") == []


def test_update_object_refuses_a_stale_version_and_keeps_the_other_half() -> None:
    """update_object as the API server: a stale resourceVersion is a conflict; a main-resource write keeps
    the stored status, a status write keeps the stored spec."""
    from wasmsched.api.types import PersistentVolumeClaim

    c = MemoryCluster()
    pvc = PersistentVolumeClaim()
    pvc.metadata.name, pvc.metadata.namespace = "data", "default"
    pvc.spec.storageClassName = "fast"
    pvc.status.phase = "Pending"
    stored = c.create(pvc)
    stale = PersistentVolumeClaim()
    stale.CopyFrom(stored)
    edit = PersistentVolumeClaim()
    edit.CopyFrom(stored)
    edit.spec.volumeName = "pv-1"
    edit.status.phase = "Bound"  # ignored: not the status subresource
    after = c.update_object(edit)
    assert (after.spec.volumeName, after.status.phase) == ("pv-1", "Pending")
    with pytest.raises(ConflictError, match="the object has been modified") as e:
        c.update_object(stale)
    assert (e.value.status, e.value.reason) == (409, "Conflict") and errors.is_conflict(e.value)
    status = PersistentVolumeClaim()
    status.CopyFrom(after)
    status.status.phase = "Bound"
    status.spec.volumeName = "other"  # ignored: a status write
    final = c.update_object(status, "status")
    assert (final.spec.volumeName, final.status.phase) == ("pv-1", "Bound")


def test_every_refusal_is_an_api_error_the_predicates_read() -> None:
    """The embedded cluster answers as kube-apiserver does, so code written against kube's predicates
    treats both clusters alike."""
    c = MemoryCluster()
    with pytest.raises(ApiError) as e:
        c.update(make_node("n1").obj())
    assert errors.is_not_found(e.value) and e.value.message == 'nodes "n1" not found'
    with pytest.raises(ApiError) as e:
        c.delete("Node", "n1")
    assert errors.is_not_found(e.value)
    pod = make_pod("p").obj()
    pod.spec.priorityClassName = "nope"
    with pytest.raises(ApiError) as e:
        c.create(pod)
    assert errors.is_forbidden(e.value) and not errors.is_invalid(e.value)
