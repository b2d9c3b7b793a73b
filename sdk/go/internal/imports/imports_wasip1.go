//go:build wasip1

package imports

import "unsafe"

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

func sptr(s string) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.StringData(s))
}

//go:wasmimport k8s.io/api node
func node(name unsafe.Pointer, nameLen uint32, buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/api nodeList
func nodeList(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/klog log
func log(severity uint32, msg unsafe.Pointer, msgLen uint32)

//go:wasmimport k8s.io/klog logs
func logs(severity uint32, msg unsafe.Pointer, msgLen uint32, kvs unsafe.Pointer, kvsLen uint32)

//go:wasmimport k8s.io/klog severity
func severity() int32

//go:wasmimport k8s.io/scheduler get_config
func getConfig(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler currentPod
func currentPod(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler targetPod
func targetPod(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler currentNodeName
func currentNodeName(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler filteredNodeList
func filteredNodeList(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler nodeToStatusMap
func nodeToStatusMap(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler nodeScoreList
func nodeScoreList(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler nodeImageStates
func nodeImageStates(name unsafe.Pointer, nameLen uint32, buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler result.cluster_events
func resultClusterEvents(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler result.node_names
func resultNodeNames(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler result.nominated_node_name
func resultNominatedNodeName(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler result.status_reason
func resultStatusReason(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler result.normalized_score_list
func resultNormalizedScoreList(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler handle.eventrecorder.eventf
func eventf(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler handle.reject_waiting_pod
func rejectWaitingPod(uid unsafe.Pointer, uidLen uint32, out unsafe.Pointer, limit uint32)

//go:wasmimport k8s.io/scheduler handle.get_waiting_pod
func getWaitingPod(uid unsafe.Pointer, uidLen uint32, out unsafe.Pointer, limit uint32)

func Node(name string, buf []byte) uint32 {
	return node(sptr(name), uint32(len(name)), ptr(buf), uint32(len(buf)))
}
func NodeList(buf []byte) uint32 { return nodeList(ptr(buf), uint32(len(buf))) }
func Log(sev int32, msg string)  { log(uint32(sev), sptr(msg), uint32(len(msg))) }
func Logs(sev int32, msg string, kvs []byte) {
	logs(uint32(sev), sptr(msg), uint32(len(msg)), ptr(kvs), uint32(len(kvs)))
}
func Severity() int32                   { return severity() }
func GetConfig(buf []byte) uint32       { return getConfig(ptr(buf), uint32(len(buf))) }
func CurrentPod(buf []byte) uint32      { return currentPod(ptr(buf), uint32(len(buf))) }
func TargetPod(buf []byte) uint32       { return targetPod(ptr(buf), uint32(len(buf))) }
func CurrentNodeName(buf []byte) uint32 { return currentNodeName(ptr(buf), uint32(len(buf))) }
func FilteredNodeList(buf []byte) uint32 {
	return filteredNodeList(ptr(buf), uint32(len(buf)))
}
func NodeToStatusMap(buf []byte) uint32 { return nodeToStatusMap(ptr(buf), uint32(len(buf))) }
func NodeScoreList(buf []byte) uint32   { return nodeScoreList(ptr(buf), uint32(len(buf))) }
func NodeImageStates(name string, buf []byte) uint32 {
	return nodeImageStates(sptr(name), uint32(len(name)), ptr(buf), uint32(len(buf)))
}
func ResultClusterEvents(b []byte)     { resultClusterEvents(ptr(b), uint32(len(b))) }
func ResultNodeNames(b []byte)         { resultNodeNames(ptr(b), uint32(len(b))) }
func ResultNominatedNodeName(s string) { resultNominatedNodeName(sptr(s), uint32(len(s))) }
func ResultStatusReason(s string)      { resultStatusReason(sptr(s), uint32(len(s))) }
func ResultNormalizedScoreList(b []byte) {
	resultNormalizedScoreList(ptr(b), uint32(len(b)))
}
func Eventf(b []byte) { eventf(ptr(b), uint32(len(b))) }
func RejectWaitingPod(uid string, out []byte) {
	rejectWaitingPod(sptr(uid), uint32(len(uid)), ptr(out), uint32(len(out)))
}
func GetWaitingPod(uid string, out []byte) {
	getWaitingPod(sptr(uid), uint32(len(uid)), ptr(out), uint32(len(out)))
}

// ABI v2 (docs/abi.md §14). The linker drops a //go:wasmimport nobody calls, so a guest imports
// these only when it uses the SDK's v2 features, and stays a v1 guest otherwise.

//go:wasmimport k8s.io/scheduler handle.snapshot.changes
func snapshotChanges(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler handle.node_info.overlay
func nodeInfoOverlay(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler handle.objects.list
func objectsList(query unsafe.Pointer, queryLen uint32, buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler handle.objects.get
func objectsGet(query unsafe.Pointer, queryLen uint32, buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler result.cluster_events_with_hints
func resultClusterEventsWithHints(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler queueing_hint.event
func queueingHintEvent(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler queueing_hint.old_object
func queueingHintOldObject(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler queueing_hint.new_object
func queueingHintNewObject(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler cycle_state.id
func cycleStateID(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler cycle_state.released
func cycleStateReleased(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler handle.nominated_pods_for_node
func nominatedPodsForNode(name unsafe.Pointer, nameLen uint32, buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler handle.run_filter_plugins_with_nominated_pods
func runFilterPluginsWithNominatedPods(name unsafe.Pointer, nameLen uint32, buf unsafe.Pointer, limit uint32) uint32

func SnapshotChanges(buf []byte) uint32 { return snapshotChanges(ptr(buf), uint32(len(buf))) }
func NodeInfoOverlay(buf []byte) uint32 { return nodeInfoOverlay(ptr(buf), uint32(len(buf))) }
func ObjectsList(query, buf []byte) uint32 {
	return objectsList(ptr(query), uint32(len(query)), ptr(buf), uint32(len(buf)))
}
func ObjectsGet(query, buf []byte) uint32 {
	return objectsGet(ptr(query), uint32(len(query)), ptr(buf), uint32(len(buf)))
}
func ResultClusterEventsWithHints(b []byte) { resultClusterEventsWithHints(ptr(b), uint32(len(b))) }
func QueueingHintEvent(buf []byte) uint32   { return queueingHintEvent(ptr(buf), uint32(len(buf))) }
func QueueingHintOldObject(buf []byte) uint32 {
	return queueingHintOldObject(ptr(buf), uint32(len(buf)))
}
func QueueingHintNewObject(buf []byte) uint32 {
	return queueingHintNewObject(ptr(buf), uint32(len(buf)))
}
func CycleStateID(buf []byte) uint32       { return cycleStateID(ptr(buf), uint32(len(buf))) }
func CycleStateReleased(buf []byte) uint32 { return cycleStateReleased(ptr(buf), uint32(len(buf))) }
func NominatedPodsForNode(name string, buf []byte) uint32 {
	return nominatedPodsForNode(sptr(name), uint32(len(name)), ptr(buf), uint32(len(buf)))
}
func RunFilterPluginsWithNominatedPods(name string, buf []byte) uint32 {
	return runFilterPluginsWithNominatedPods(sptr(name), uint32(len(name)), ptr(buf), uint32(len(buf)))
}

// ABI v2: the queue and gangs (docs/abi.md §15). Reached only from the SDK code of each feature.

//go:wasmimport k8s.io/scheduler queued_pod_info
func queuedPodInfo(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler result.sort_key
func resultSortKey(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler handle.waiting_pods
func waitingPods(buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler handle.waiting_pod.allow
func waitingPodAllow(query unsafe.Pointer, queryLen uint32) int32

//go:wasmimport k8s.io/scheduler handle.waiting_pod.reject
func waitingPodReject(query unsafe.Pointer, queryLen uint32) int32

//go:wasmimport k8s.io/scheduler handle.pods.list
func podsList(query unsafe.Pointer, queryLen uint32, buf unsafe.Pointer, limit uint32) uint32

//go:wasmimport k8s.io/scheduler handle.activate
func activate(buf unsafe.Pointer, n uint32)

//go:wasmimport k8s.io/scheduler handle.clock
func clock(buf unsafe.Pointer, limit uint32) uint32

func QueuedPodInfo(buf []byte) uint32 { return queuedPodInfo(ptr(buf), uint32(len(buf))) }
func ResultSortKey(b []byte)          { resultSortKey(ptr(b), uint32(len(b))) }
func WaitingPods(buf []byte) uint32   { return waitingPods(ptr(buf), uint32(len(buf))) }
func WaitingPodAllow(query []byte) int32 {
	return waitingPodAllow(ptr(query), uint32(len(query)))
}
func WaitingPodReject(query []byte) int32 {
	return waitingPodReject(ptr(query), uint32(len(query)))
}
func PodsList(query, buf []byte) uint32 {
	return podsList(ptr(query), uint32(len(query)), ptr(buf), uint32(len(buf)))
}
func Activate(b []byte)       { activate(ptr(b), uint32(len(b))) }
func Clock(buf []byte) uint32 { return clock(ptr(buf), uint32(len(buf))) }
