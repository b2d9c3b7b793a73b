package api

// GVK names a resource in a ClusterEvent, numbered as in docs/abi.md §7.
type GVK uint32

const (
	Pod GVK = iota
	Node
	PersistentVolume
	PersistentVolumeClaim
	PodSchedulingContext
	ResourceClaim
	StorageClass
	CSINode
	CSIDriver
	CSIStorageCapacity
	WildCard
)

// ActionType is a bit set of changes to a resource (docs/abi.md §7, guest numbering).
type ActionType uint32

const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition

	// Update is any update; the host widens it to every framework update action.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition
	// All is every action.
	All = Add | Delete | Update
)

// ClusterEvent is a change that may make a pod this plugin rejected schedulable again.
type ClusterEvent struct {
	Resource   GVK
	ActionType ActionType
}
