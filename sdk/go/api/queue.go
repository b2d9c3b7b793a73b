package api

import (
	"bytes"
	"encoding/binary"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ABI v2: the queue and gangs (docs/abi.md §15).

// PreEnqueuePlugin gates pods before they enter the active queue (kube's PreEnqueuePlugin). A
// status other than Success gates the pod with its reason until an event the plugin registered
// lets it pass (docs/abi.md §15.1). Linked by package exports/preenqueue.
type PreEnqueuePlugin interface {
	PreEnqueue(pod PodInfo) *Status
}

// QueuedPodInfo is a pod in the scheduling queue (kube's framework.QueuedPodInfo): the pod, when
// it entered the queue, when it was first attempted (nil before) and how many times it was tried.
// Times are on the scheduler's clock (docs/abi.md §15.5).
type QueuedPodInfo struct {
	// PodInfo is the pod, decoded on its first Pod() call.
	PodInfo
	Timestamp               time.Time
	InitialAttemptTimestamp *time.Time
	Attempts                int
}

// GetPodInfo returns the pod (kube's QueuedPodInfo embeds *PodInfo).
func (q QueuedPodInfo) GetPodInfo() PodInfo { return q.PodInfo }

// QueueSortPlugin orders the active queue (kube's QueueSortPlugin). Instead of Less, called per
// comparison, the plugin gives each pod a key once, when the pod enters the active queue; the queue
// pops the smallest key first (byte order), so Less(a, b) is key(a) < key(b) (docs/abi.md §15.2).
// Build keys with SortKey's methods, which encode typed fields so that byte order is their order.
// Linked by package exports/queuesort.
type QueueSortPlugin interface {
	SortKey(p QueuedPodInfo) SortKey
}

// Less is kube's QueueSortPlugin.Less for a key-based plugin: whether a pops before b.
func Less(pl QueueSortPlugin, a, b QueuedPodInfo) bool {
	return bytes.Compare(pl.SortKey(a), pl.SortKey(b)) < 0
}

// SortKey is a sort key built field by field: each method appends one field, encoded so that
// comparing two keys byte by byte (memcmp; a proper prefix first) compares their fields in order,
// the first field first, as a chain of `if a.f != b.f { return a.f < b.f }` in a Less would:
//
//	api.SortKey{}.Int64Desc(int64(priority)).Time(created).String(pod.Namespace).String(pod.Name)
//
// Encodings (compose keys of the same field types in the same order; mixed layouts compare
// meaninglessly):
//   - Int64: 8 bytes big-endian of v with its sign bit flipped (negative before positive).
//   - Int64Desc: the bitwise complement of Int64's bytes (larger first).
//   - Uint64: 8 bytes big-endian.
//   - Time, TimeDesc: Int64(t.Unix()) then 4 bytes big-endian of t.Nanosecond() (complemented for
//     Desc), so every time.Time orders correctly, the zero Time first (last for Desc).
//   - String: the bytes with each 0x00 escaped as 0x00 0xFF, then the terminator 0x00 0x01. A
//     string sorts before every longer string it prefixes, whatever fields follow, and embedded
//     zero bytes keep their order.
//   - Bool: 0x00 for false, 0x01 for true (false first).
//
// Methods append to the key like append does: build each key from SortKey{} (or copy a shared
// prefix with bytes.Clone) rather than extending one prefix twice.
type SortKey []byte

// Bytes returns the encoded key.
func (k SortKey) Bytes() []byte { return []byte(k) }

// Int64 appends v, smaller first.
func (k SortKey) Int64(v int64) SortKey {
	return binary.BigEndian.AppendUint64(k, uint64(v)^(1<<63))
}

// Int64Desc appends v, larger first.
func (k SortKey) Int64Desc(v int64) SortKey {
	return binary.BigEndian.AppendUint64(k, ^(uint64(v) ^ (1 << 63)))
}

// Uint64 appends v, smaller first.
func (k SortKey) Uint64(v uint64) SortKey { return binary.BigEndian.AppendUint64(k, v) }

// Time appends t, earlier first.
func (k SortKey) Time(t time.Time) SortKey {
	return binary.BigEndian.AppendUint32(k.Int64(t.Unix()), uint32(t.Nanosecond()))
}

// TimeDesc appends t, later first.
func (k SortKey) TimeDesc(t time.Time) SortKey {
	return binary.BigEndian.AppendUint32(k.Int64Desc(t.Unix()), ^uint32(t.Nanosecond()))
}

// String appends s, in byte order of the strings.
func (k SortKey) String(s string) SortKey {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			k = append(k, 0, 0xFF)
		} else {
			k = append(k, s[i])
		}
	}
	return append(k, 0, 1)
}

// Bool appends b, false first.
func (k SortKey) Bool(b bool) SortKey {
	if b {
		return append(k, 1)
	}
	return append(k, 0)
}

// WaitingPod is a pod waiting at Permit (kube's framework.WaitingPod), from
// handle.IterateOverWaitingPods (docs/abi.md §15.3).
type WaitingPod interface {
	// GetPod returns the pod, decoded once per version and shared: read only.
	GetPod() *corev1.Pod
	// GetPendingPlugins returns the Permit plugins the pod still waits on.
	GetPendingPlugins() []string
	// Allow lets the pod go on as far as pluginName is concerned; once no plugin is pending it
	// proceeds to binding (after the running call returns).
	Allow(pluginName string)
	// Reject fails the pod's Permit with msg as pluginName's Unschedulable status.
	Reject(pluginName, msg string)
}
