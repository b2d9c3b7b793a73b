"""The test table of dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go
(kube 1.37.2, TestAllocator's testcases), translated mechanically from the Go literal: same names, same
comments, same expectations. Cases gated by features the incubating allocator does not support are
skipped by the runner as kube skips them. Left out: the cases whose Go literal builds objects in a
closure (func() ... {...}()), listed in SKIPPED_GO_CLOSURE_CASES."""

# ruff: noqa: E501

from tests.plugins.dra_allocatortesting import (
    AllocationConfigSourceClaim,
    AllocationConfigSourceClass,
    AllocationResult,
    AllocationResultsMaxSize,
    AllocatorTestCase,
    And,
    BinarySI,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CELDeviceSelector,
    Concat,
    ContainSubstring,
    DecimalSI,
    DeviceAllocationConfiguration,
    DeviceAllocationModeAll,
    DeviceAllocationModeExactCount,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceDerivedAttribute,
    DeviceRequest,
    DeviceSelector,
    DeviceTaint,
    DeviceTaintEffectNoSchedule,
    ExactDeviceRequest,
    Features,
    FullyQualifiedName,
    MakeDeviceID,
    MakeSharedDeviceID,
    MatchError,
    MaxInt,
    MustParse,
    NewQuantity,
    NodeSelector,
    NodeSelectorOpIn,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    SkipNodeOperationAll,
    Sprintf,
    Stable,
    allDeviceRequest,
    allocationResult,
    allocationResultWithConfig,
    allocationResultWithConfigs,
    boolAttribute,
    capacity0,
    capacity1,
    claim,
    claim0,
    claim1,
    claimWithDeviceConfig,
    claimWithRequest,
    claimWithRequests,
    classA,
    classB,
    classWithAllowMultipleAllocations,
    classWithConfig,
    counterSet,
    counterSet1,
    counterSet2,
    device,
    device0,
    device1,
    device2,
    device3,
    device4,
    deviceAllocationResult,
    deviceAllocationResultWithSkipNodeOperations,
    deviceClaimConfig,
    deviceConfiguration,
    deviceCounterConsumption,
    deviceCounterConsumptionWithGroups,
    deviceRequest,
    deviceRequestAllocationResult,
    deviceRequestAllocationResultWithBindingConditions,
    driverA,
    driverB,
    fieldNameKey,
    fixedShareID,
    four,
    fromCounters,
    int64,
    intAttribute,
    klass,
    localNodeSelector,
    multipleDeviceAllocationResults,
    node,
    node1,
    node2,
    nodeLabelSelector,
    nodeSelectionAll,
    nodeSelectionPerDevice,
    nodeWithDRAOptionalNodeOperations,
    nonExistentAttribute,
    numaNodeAttribute,
    objects,
    one,
    planetKey,
    planetValueEarth,
    pointThree,
    pointTwo,
    pointTwoFive,
    pool1,
    pool2,
    pool3,
    pool4,
    region1,
    region2,
    regionKey,
    req0,
    req0SubReq0,
    req0SubReq1,
    req1,
    req1SubReq0,
    req1SubReq1,
    req2,
    req2SubReq0,
    req2SubReq1,
    req3,
    request,
    requestWithDerivedAttributes,
    requestWithPrioritizedList,
    resourcePool,
    setsNew,
    slice1,
    slice2,
    slice3,
    slice4,
    sliceWithCounterSets,
    sliceWithDevices,
    sliceWithMultipleDevices,
    sliceWithNoDevices,
    sliceWithOneDevice,
    stringAttribute,
    subReq0,
    subReq1,
    subRequest,
    taintNoExecute,
    taintNone,
    taintNoSchedule,
    three,
    tolerationNoExecute,
    tolerationNoSchedule,
    tolerationNoScheduleKey1,
    two,
    unwrap,
    unwrapResourceSlices,
    versionAttribute,
    zero,
)

SKIPPED_GO_CLOSURE_CASES = [
    "obsolete-slice",
    "duplicate-slice",
    "all-devices-of-the-incomplete-pool",
    "all-devices-some-allocated-admin-access",
    "all-devices-some-allocating-admin-access",
    "count-devices-some-allocated-admin-access",
    "separate-claims-share-device-admin-access",
    "admin-access-claims-device-allocating-for-non-admin-access",
    "all-devices-slice-without-devices-prioritized-list",
    "all-devices-no-slices-prioritized-list",
    "all-devices-some-allocated-prioritized-list",
    "admin-access-disabled",
    "admin-access-enabled",
    "with-constraint-not-matching-int-attribute-all-devices",
    "partitionable-all-mode-constraint-must-error-with-reserved-counter",
    "with-claim-config-for-two-requests",
    "unknown-selector",
    "unknown-allocation-mode",
    "unknown-constraint",
    "invalid-CEL-one-device",
    "invalid-CEL-one-device-class",
    "invalid-CEL-all-devices",
    "prioritized-list-subrequests-with-allocation-mode-all",
    "prioritized-list-disabled",
    "tainted-admin-access",
    "tainted-admin-access-disabled",
    "multi-host-resource-pool-with-stale-slice-for-current-node",
    "multi-host-resource-pool-complete-update-from-node-1-to-node-2",
    "multi-host-resource-pool-complete-update-from-node-2-to-node-1",
    "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
    "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
]

CASES: dict[str, AllocatorTestCase] = {
    "empty": AllocatorTestCase(),
    # Two requests in one claim, both landing on the same counter set with the
    # same compatibility group: they can be co-allocated.
    "compatibility-groups-compatible": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "mig"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    # Two requests in one claim, the only candidates are an incompatible pair on
    # the same counter set (mig vs vgpu): no combination satisfies the claim.
    "compatibility-groups-incompatible": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "vgpu"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    # A single-device claim whose first candidate (device1) declares group "mig"
    # and carries a NoSchedule taint, while the second (device2) declares the
    # disjoint group "vgpu". device1 is rejected by its taint; the compatibility
    # narrowing it consumed on counterSet1 must be rolled back so device2, which
    # shares no group with it, can still be allocated.
    "compatibility-groups-taint-rollback": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True, DeviceTaints=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None)
                .withTaints(taintNoSchedule)
                .withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "vgpu"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    # An incompatible device is already allocated on the counter set; its groups
    # are read live from the slice. The only remaining candidate shares no
    # group, so the claim is unschedulable.
    "compatibility-groups-incompatible-with-allocated-peer": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "vgpu"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    # A compatible device is already allocated on the counter set; the candidate
    # shares the group the peer declares in the slice and is admitted.
    "compatibility-groups-compatible-with-allocated-peer": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    # With the feature disabled, a slice with a device declaring
    # compatibility groups is ignored during pool gathering (the scheduler
    # cannot validate it), which leaves its pool incomplete and blocks the
    # pool as a whole. A separate pool without groups is still allocatable.
    # This is the feature-off safety behavior and is verified across all
    # allocator variants.
    "compatibility-groups-disabled-skips-grouped-pool": AllocatorTestCase(
        # CompatibilityGroups is set explicitly to False so this case keeps
        # exercising the feature-disabled path unchanged after the feature
        # graduates to on-by-default. The scope is the pool: device1's pool1
        # is off-limits, but device2 in the group-free pool2 is still
        # allocated.
        features=Features(PartitionableDevices=True, CompatibilityGroups=False),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "mig"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 2),
                driverA,
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {capacity0: two}),
                ),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool2, 2),
                driverA,
                counterSet(counterSet2, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool2, device2, False),
            )
        ],
    ),
    # With the feature disabled, a candidate that declares no groups is not
    # allocatable either when another device of the same pool declares them:
    # only the slice with the grouped device1 gets ignored during pool
    # gathering, but that leaves the pool incomplete, which also blocks
    # device2 in the remaining device slice - whether or not device1 is
    # allocated, so that the outcome does not depend on allocation order.
    # Verified across all allocator variants, including stable.
    "compatibility-groups-disabled-skips-ungrouped-device-in-grouped-pool": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=False),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: one}),
                ),
            ),
            sliceWithCounterSets(
                slice3,
                node1,
                resourcePool(pool1, 3),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    # Groups are tracked per counter set: two devices whose groups are
    # disjoint can still be co-allocated when they draw from different
    # counter sets of the same pool.
    "compatibility-groups-multiple-counter-sets": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: two}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet2, {capacity0: two}, "vgpu"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
                counterSet(counterSet2, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    # A device drawing from several counter sets must be admitted by every
    # one of them. device2 is unopposed on counterSet2 (nothing else draws
    # from that set) but shares no group with device1 on counterSet1, so
    # no combination satisfies the claim - including the backtracked order
    # where device2 goes first and its narrowing of both counter sets has
    # to be rolled back.
    "compatibility-groups-multiple-counter-sets-spanning-device": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "vgpu"),
                    deviceCounterConsumptionWithGroups(counterSet2, {capacity0: one}, "vgpu"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
                counterSet(counterSet2, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    # The first subrequest asks for two devices, but only one candidate is
    # compatible with the "mig" device taken by req0 (device3 declares the
    # disjoint "vgpu"), so it fails and its tentative narrowing is rolled
    # back before the allocator falls back to the second subrequest.
    "compatibility-groups-with-prioritized-list": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(subReq0, classA, 2),
                    subRequest(subReq1, classA, 1),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "vgpu"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
    ),
    # Compatibility groups steer allocation among shareable devices: req1
    # does not fit on device1 (req0's share exhausted its capacity) and is
    # rejected on device2, which declares the disjoint "vgpu" group on the
    # same counter set, before landing on device3.
    "compatibility-groups-with-consumable-capacity": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one),
                deviceRequest(req1, classA, 1).withCapacityRequest(one),
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                )
                .withAllowMultipleAllocations(),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "vgpu"),
                )
                .withAllowMultipleAllocations(),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                )
                .withAllowMultipleAllocations(),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device3).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            )
        ],
    ),
    # Two claims allocated in a single call must satisfy the constraint
    # jointly: the second claim's device is checked against the rolling
    # intersection left by the first claim's device.
    "compatibility-groups-multiple-claims": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(
            claimWithRequest(claim0, req0, classA),
            claimWithRequest(claim1, req0, classA),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False)),
        ],
    ),
    # Each claim could be satisfied on its own, but not both in one call:
    # whichever device goes to the first claim, the other claim's only
    # remaining candidate declares a disjoint group on the same counter
    # set. The rolling intersection spans claims, so the joint allocation
    # is correctly refused.
    "compatibility-groups-multiple-claims-incompatible": AllocatorTestCase(
        features=Features(PartitionableDevices=True, CompatibilityGroups=True),
        claimsToAllocate=objects(
            claimWithRequest(claim0, req0, classA),
            claimWithRequest(claim1, req0, classA),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "mig"),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumptionWithGroups(counterSet1, {capacity0: one}, "vgpu"),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "simple": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "optional-node-operations": AllocatorTestCase(
        features=Features(OptionalNodeOperations=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA).withSkipNodeOperations(SkipNodeOperationAll)
        ),
        node=nodeWithDRAOptionalNodeOperations(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResultWithSkipNodeOperations(req0, driverA, pool1, device1, SkipNodeOperationAll),
            )
        ],
    ),
    "optional-node-operations-missing-feature": AllocatorTestCase(
        features=Features(OptionalNodeOperations=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA).withSkipNodeOperations(SkipNodeOperationAll)
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "other-node": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverB),
            sliceWithOneDevice(slice2, node2, pool2, driverA),
        ),
        node=node(node2, region2),
        expectResults=[
            allocationResult(
                localNodeSelector(node2),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    ),
    "small-and-large": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {
                        "memory": MustParse("1Gi"),
                    },
                    None,
                ),
                device(
                    device2,
                    {
                        "memory": MustParse("2Gi"),
                    },
                    None,
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "small-and-large-backtrack-requests": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        # Reversing the order in which the devices are listed causes the "large" device to
        # be allocated for the "small" request, leaving the "large" request unsatisfied.
        # The initial decision needs to be undone before a solution is found.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device2,
                    {
                        "memory": MustParse("2Gi"),
                    },
                    None,
                ),
                device(
                    device1,
                    {
                        "memory": MustParse("1Gi"),
                    },
                    None,
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "small-and-large-backtrack-claims": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        # Reversing the order in which the devices are listed causes the "large" device to
        # be allocated for the "small" request, leaving the "large" request unsatisfied.
        # The initial decision needs to be undone before a solution is found.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device2,
                    {
                        "memory": MustParse("2Gi"),
                    },
                    None,
                ),
                device(
                    device1,
                    {
                        "memory": MustParse("1Gi"),
                    },
                    None,
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req1, driverA, pool1, device2, False)),
        ],
    ),
    "devices-split-across-different-slices": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        Count=2,
                        AllocationMode=DeviceAllocationModeExactCount,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice2, node1, pool2, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    ),
    "no-slices": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    ),
    "not-enough-suitable-devices": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req1, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "no-classes": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=None,
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("could not retrieve device class class-a")),
    ),
    "unknown-class": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, "unknown-class")),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("could not retrieve device class unknown-class")),
    ),
    "empty-class": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, "")),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring("claim claim-0, request req-0: missing device class name (unsupported request type?)")
        ),
    ),
    "no-claims-to-allocate": AllocatorTestCase(
        claimsToAllocate=None,
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-single": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "all-devices-with-consumed-counters": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "all-devices-many": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool2, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    ),
    "all-devices-plus-another": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
        ),
        classes=objects(
            klass(classA, driverA),
            klass(classB, driverB),
        ),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
        ],
    ),
    "all-devices-plus-another-reversed": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            ),
        ),
        classes=objects(
            klass(classA, driverA),
            klass(classB, driverB),
        ),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
        ],
    ),
    "all-devices-many-plus-another": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
        ),
        classes=objects(
            klass(classA, driverA),
            klass(classB, driverB),
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
        ],
    ),
    "all-devices-many-plus-another-reversed": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            ),
        ),
        classes=objects(
            klass(classA, driverA),
            klass(classB, driverB),
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            ),
        ],
    ),
    "all-devices-no-solution": AllocatorTestCase(
        # One device, two claims both trying to allocate it.
        claimsToAllocate=objects(
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classA,
                    ),
                ),
            ),
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            ),
        ),
        classes=objects(
            klass(classA, driverA),
        ),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
        ),
        node=node(node1, region1),
    ),
    "all-devices-no-solution-reversed": AllocatorTestCase(
        # One device, two claims both trying to allocate it.
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classA,
                    ),
                ),
            ),
        ),
        classes=objects(
            klass(classA, driverA),
        ),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
        ),
        node=node(node1, region1),
    ),
    "all-devices-slice-without-devices": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithNoDevices(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-no-slices": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-some-allocated": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
        ],
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "network-attached-device": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                nodeLabelSelector(regionKey, region1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "unsuccessful-allocation-network-attached-device": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)),
        # Wrong region, no devices available.
        node=node(node2, region2),
        expectResults=None,
    ),
    "many-network-attached-devices": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 4))),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA),
            sliceWithOneDevice(slice1, nodeSelectionAll, pool2, driverA),
            sliceWithOneDevice(slice1, nodeLabelSelector(planetKey, planetValueEarth), pool3, driverA),
            sliceWithOneDevice(slice1, localNodeSelector(node1), pool4, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                # A union of the individual selectors.
                NodeSelector(
                    NodeSelectorTerms=[
                        NodeSelectorTerm(
                            MatchExpressions=[
                                NodeSelectorRequirement(Key=regionKey, Operator=NodeSelectorOpIn, Values=[region1]),
                                NodeSelectorRequirement(
                                    Key=planetKey, Operator=NodeSelectorOpIn, Values=[planetValueEarth]
                                ),
                            ],
                            MatchFields=[
                                NodeSelectorRequirement(Key=fieldNameKey, Operator=NodeSelectorOpIn, Values=[node1]),
                            ],
                        )
                    ],
                ),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
                deviceAllocationResult(req0, driverA, pool3, device1, False),
                deviceAllocationResult(req0, driverA, pool4, device1, False),
            )
        ],
    ),
    "local-and-network-attached-devices": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool2, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                # Once there is any node-local device, the selector is for that node.
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    ),
    "several-different-drivers": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req0, classB)),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)),
        ],
    ),
    "already-allocated-devices": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
            MakeDeviceID(driverA, pool1, device2),
        ],
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(MatchAttribute=intAttribute),
                    DeviceConstraint(MatchAttribute=versionAttribute),
                    DeviceConstraint(MatchAttribute=stringAttribute),
                    DeviceConstraint(MatchAttribute=boolAttribute),
                ],
                request(req0, classA, 1),
                request(req1, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                        "numa": DeviceAttribute(IntValue=(int64(1))),
                        "stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue")),
                        "boolAttribute": DeviceAttribute(BoolValue=(True)),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                        "numa": DeviceAttribute(IntValue=(int64(1))),
                        "stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue")),
                        "boolAttribute": DeviceAttribute(BoolValue=(True)),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "with-constraint-non-existent-attribute": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequest(
                claim0,
                req0,
                classA,
                DeviceConstraint(
                    MatchAttribute=nonExistentAttribute,
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-int-attribute": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=intAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(1))),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(2))),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-string-attribute": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue2")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-bool-attribute": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=boolAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValue=(True)),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValue=(False)),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-version-attribute": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=versionAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("2.0.0")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-for-request": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(
                        Requests=[req0],
                        MatchAttribute=versionAttribute,
                    ),
                ],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("2.0.0")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "with-constraint-for-request-retry": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(
                        Requests=[req0],
                        MatchAttribute=versionAttribute,
                    ),
                    DeviceConstraint(
                        MatchAttribute=stringAttribute,
                    ),
                ],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                # This device does not satisfy the second
                # match attribute, so the allocator must
                # backtrack.
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                        "stringAttribute": DeviceAttribute(StringValue=("a")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("2.0.0")),
                        "stringAttribute": DeviceAttribute(StringValue=("b")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("3.0.0")),
                        "stringAttribute": DeviceAttribute(StringValue=("b")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "with-class-device-config": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(classWithConfig(classA, driverA, "classAttribute")),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(deviceAllocationResult(req0, driverA, pool1, device1, False)),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverA, "classAttribute"),
                    ),
                ],
            ),
        ],
    ),
    "with-class-device-config-with-multiple-request-and-configs": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(claim0, [], request(req0, classA, 1), request(req1, classA, 1), request(req2, classB, 1))
        ),
        classes=objects(
            classWithConfig(classA, driverA, "classAttribute-A"),
            classWithConfig(classB, driverB, "classAttribute-B"),
        ),
        slices=unwrap(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2),
            sliceWithOneDevice(slice2, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                    deviceAllocationResult(req2, driverB, pool1, device1, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=[req0, req1],
                        DeviceConfiguration=deviceConfiguration(driverA, "classAttribute-A"),
                    ),
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=[req2],
                        DeviceConfiguration=deviceConfiguration(driverB, "classAttribute-B"),
                    ),
                ],
            ),
        ],
    ),
    "claim-with-device-config": AllocatorTestCase(
        claimsToAllocate=objects(claimWithDeviceConfig(claim0, req0, classA, driverA, "deviceAttribute")),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfig(
                localNodeSelector(node1),
                driverA,
                AllocationConfigSourceClaim,
                "deviceAttribute",
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
        ],
    ),
    "too-many-devices-single-request": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 500))),
        classes=objects(klass(classA, driverA)),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    ),
    "many-devices-okay": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, AllocationResultsMaxSize))),
        classes=objects(klass(classA, driverA)),
    ),
    "too-many-devices-total": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, AllocationResultsMaxSize),
                request(req1, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize + 1)
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    ),
    # Two counts that are each representable but together overflow the native
    # int accumulator to a negative value, rejected before the sum is formed.
    # The value comes from MaxInt so it also triggers on 32-bit builds.
    "exact-count-total-overflows-claim-limit": AllocatorTestCase(
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, int64(MaxInt // 2 + 1)),
                deviceRequest(req1, classA, int64(MaxInt // 2 + 1)),
            )
        ),
        classes=objects(klass(classA, driverA)),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    ),
    # Four counts that would wrap a naive int accumulator back to zero rather
    # than negative; each is rejected against remaining capacity before summing.
    "exact-count-total-would-wrap-to-zero": AllocatorTestCase(
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, int64(MaxInt // 2 + 1)),
                deviceRequest(req1, classA, int64(MaxInt // 2 + 1)),
                deviceRequest(req2, classA, int64(MaxInt // 2 + 1)),
                deviceRequest(req3, classA, int64(MaxInt // 2 + 1)),
            )
        ),
        classes=objects(klass(classA, driverA)),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    ),
    # req0 fits on its own, so the rejection has to name req1 as the one
    # that pushes the claim over.
    "exact-count-sum-exceeds-claim-limit": AllocatorTestCase(
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 20),
                deviceRequest(req1, classA, 20),
            )
        ),
        classes=objects(klass(classA, driverA)),
        expectError=MatchError(
            And(
                ContainSubstring("request " + req1),
                ContainSubstring("exceeds the claim limit"),
            )
        ),
    ),
    # Two counts whose sum exactly fills the per-claim limit both allocate;
    # this pins the pre-flight comparison as > and not >=.
    "exact-count-sum-exactly-fills-claim-limit": AllocatorTestCase(
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, AllocationResultsMaxSize // 2),
                deviceRequest(req1, classA, AllocationResultsMaxSize // 2),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                *Concat(
                    multipleDeviceAllocationResults(req0, driverA, pool1, AllocationResultsMaxSize // 2, 0),
                    multipleDeviceAllocationResults(
                        req1, driverA, pool1, AllocationResultsMaxSize // 2, AllocationResultsMaxSize // 2
                    ),
                ),
            )
        ],
    ),
    "all-devices-invalid-CEL": AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 500))),
        classes=objects(klass(classA, driverA)),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    ),
    "prioritized-list-first-unavailable": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classB, 1),
                    subRequest(subReq1, classA, 1),
                )
            )
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-non-available": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classB, 2),
                    subRequest(subReq1, classA, 2),
                )
            )
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice2, node1, pool2, driverB),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "prioritized-list-device-config": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1),
                    subRequest(subReq1, classB, 2),
                ),
            )
            .withConfigs(
                objects(
                    deviceClaimConfig([req0SubReq0], deviceConfiguration(driverA, "foo")),
                    deviceClaimConfig([req0SubReq1], deviceConfiguration(driverB, "bar")),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverB,
                device(device1, None, {}),
                device(device2, None, {}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False),
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClaim,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverB, "bar"),
                    ),
                ],
            )
        ],
    ),
    "prioritized-list-class-config": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 2),
                    subRequest(subReq1, classB, 2),
                )
            )
        ),
        classes=objects(
            classWithConfig(classA, driverA, "foo"),
            classWithConfig(classB, driverB, "bar"),
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverB,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(device3, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False),
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverB, "bar"),
                    ),
                ],
            )
        ],
    ),
    "claim-config-scoped-to-subrequests-of-one-request": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1),
                    subRequest(subReq1, classB, 1),
                ),
                deviceRequest(req1, classA, 1),
            )
            .withConfigs(
                objects(
                    deviceClaimConfig([req0SubReq0, req0SubReq1], deviceConfiguration(driverA, "scoped")),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrap(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClaim,
                        Requests=[req0SubReq0, req0SubReq1],
                        DeviceConfiguration=deviceConfiguration(driverA, "scoped"),
                    ),
                ],
            )
        ],
    ),
    "claim-config-covering-all-requests-is-cleared": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1),
                    subRequest(subReq1, classB, 1),
                ),
                deviceRequest(req1, classA, 1),
            )
            .withConfigs(
                objects(
                    # Covers req0 (via its selected subrequest) and req1 (by name),
                    # i.e. every top-level request, so Requests must collapse to None.
                    deviceClaimConfig([req0SubReq0, req1], deviceConfiguration(driverA, "all")),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrap(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClaim,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverA, "all"),
                    ),
                ],
            )
        ],
    ),
    "prioritized-list-subrequests-with-expressions": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0""", driverA
                            ),
                        ),
                    ),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        2,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {
                        "memory": MustParse("2Gi"),
                    },
                    None,
                ),
                device(
                    device2,
                    {
                        "memory": MustParse("2Gi"),
                    },
                    None,
                ),
                device(
                    device3,
                    {
                        "memory": MustParse("1Gi"),
                    },
                    None,
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
    ),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(
                    Requests=[req0, req1],
                    MatchAttribute=versionAttribute,
                ),
            )
            .withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(
                    device2,
                    {
                        "memory": MustParse("2Gi"),
                    },
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("2.0.0")),
                    },
                ),
                device(
                    device3,
                    {
                        "memory": MustParse("1Gi"),
                    },
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool2, device3, False),
            )
        ],
    ),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(
                    Requests=[req0, req1SubReq0],
                    MatchAttribute=versionAttribute,
                ),
            )
            .withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(
                    device2,
                    {
                        "memory": MustParse("2Gi"),
                    },
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("2.0.0")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool2, device2, False),
            )
        ],
    ),
    "prioritized-list-allocation-mode-all-multiple-requests": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(subReq0, classA, 0).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(subReq1, classA, 1),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
    ),
    "prioritized-list-multi-request": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req1, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                    {},
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(
                    device2,
                    {
                        "memory": MustParse("4Gi"),
                    },
                    {},
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False),
            )
        ],
    ),
    "prioritized-list-with-backtracking": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
                deviceRequest(req1, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r"""device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0""", driverA
                            ),
                        )
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                    {},
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(
                    device2,
                    {
                        "memory": MustParse("4Gi"),
                    },
                    {},
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-too-many-in-first-subrequest": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classB, 500),
                    subRequest(subReq1, classA, 1),
                )
            )
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    ),
    # A prioritized list is worth at least its smallest alternative, so the
    # pre-flight check reads that. min(20, 24) leaves the claim over the
    # limit before any device is looked at.
    "prioritized-list-minimum-sum-exceeds-claim-limit": AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 20),
                requestWithPrioritizedList(
                    req1,
                    subRequest(subReq0, classA, 20),
                    subRequest(subReq1, classA, 24),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        expectError=MatchError(
            And(
                ContainSubstring("request " + req1),
                ContainSubstring("exceeds the claim limit"),
            )
        ),
    ),
    # The oversized alternative sits behind a device already allocated for the
    # claim, which is what overflowed the per-request check. Only the pinned
    # invocation count separates pruning it from descending into it.
    "prioritized-list-overflowing-first-subrequest-is-pruned": AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(subReq0, classA, int64(MaxInt)),
                    subRequest(subReq1, classA, 1),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
        expectNumAllocateOneInvocations=8,
    ),
    "partitionable-devices-single-device": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "partitionable-devices-counter-quantities-are-not-modified": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
        ],
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("9000000000000000000")}),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"c": MustParse("10000000000000000000")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "partitionable-devices-counter-cache-scoped-by-pool-ID": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req1, classB, 1)),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            # driverA / pool "pool-1": counterSet1 c:1, device1 consumes c:1.
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"c": MustParse("1")}),
            ),
            # driverB / pool "pool-1": same pool name, different driver. Its capacity and
            # consumption differ (c:2) on purpose, so that leaving *either* cache keyed by
            # pool name alone fails this case: device2 would be checked against driverA's
            # cached c:1 and wrongly rejected.
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool1, 2),
                driverB,
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("2")}),
                ),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool1, 2),
                driverB,
                counterSet(counterSet1, {"c": MustParse("2")}),
            ),
        ),
        node=node(node1, region1),
        # driver-a/pool-1 and driver-b/pool-1 are distinct pools with independent counter
        # sets, so both devices allocate. The differing capacities make this guard both
        # caches: keying availableCounters or consumedCounters by pool name alone lets
        # driver A's cache leak into driver B's pool and fails the case.
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req1, driverB, pool1, device2, False)),
        ],
    ),
    "partitionable-devices-counter-cache-not-crossed-between-driver-schemas": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req1, classB, 1)),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            # driverA / pool "pool-1": counterSet1 with c:1, device1 consumes c:1 (valid).
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"c": MustParse("1")}),
            ),
            # driverB / pool "pool-1": same pool name but a different counter set
            # (counterSet2 with d:1). device2 over-consumes it (d:2) and must be rejected.
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool1, 2),
                driverB,
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"d": MustParse("2")}),
                ),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool1, 2),
                driverB,
                counterSet(counterSet2, {"d": MustParse("1")}),
            ),
        ),
        node=node(node1, region1),
        # device2 over-consumes its own counter (d:2 > d:1), so it must be rejected and
        # the allocation cannot be satisfied. If the caches are keyed by pool name,
        # device2 reuses driver A's cached counterSet1 and its own counterSet2 is never
        # compared, so it is wrongly accepted (over-allocation).
        expectResults=[],
    ),
    "partitionable-devices-taint-releases-counter": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None)
                .withTaints(taintNoSchedule)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"c": MustParse("1")}),
            ),
        ),
        node=node(node1, region1),
        # device1 is rejected by its NoSchedule taint after its counter is
        # reserved. Releasing that reservation lets the clean device2 allocate.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "partitionable-devices-constraint-releases-counter": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(MatchAttribute=stringAttribute)],
                request(req0, classA, 2),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("red")),
                    },
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("blue")),
                    },
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("blue")),
                    },
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"c": MustParse("2")}),
            ),
        ),
        node=node(node1, region1),
        # device1 (red) is accepted first; the blue candidates are rejected by
        # the match-attribute constraint after their counters are reserved.
        # Releasing those reservations lets the two blue devices allocate.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-consumable-capacity-backtrack-releases-counter": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].kind == "shared"''', driverA),
                        )
                    ),
                ),
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].kind == "counteronly"''', driverA),
                        )
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                # device1 allows multiple allocations and consumes the single
                # shared counter. It is listed first, so req0 reserves its counter
                # on the first try.
                device(
                    device1,
                    None,
                    {
                        "kind": DeviceAttribute(StringValue=("shared")),
                    },
                )
                .withAllowMultipleAllocations()
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
                # device2 consumes no counter and is the correct choice for req0
                # once device1 has been backtracked.
                device(
                    device2,
                    None,
                    {
                        "kind": DeviceAttribute(StringValue=("shared")),
                    },
                ),
                # device3 is the only device that satisfies req1 and needs the same
                # counter device1 reserved.
                device(
                    device3,
                    None,
                    {
                        "kind": DeviceAttribute(StringValue=("counteronly")),
                    },
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"c": MustParse("1")}),
            ),
        ),
        node=node(node1, region1),
        # device1 allows multiple allocations and reserves the single shared
        # counter when req0 tries it first. req1 can only use device3, which needs
        # that same counter, so the search must backtrack device1. The backtracking
        # undo has to release device1's counter reservation; otherwise req0 cannot
        # fall back to device2 and req1 cannot take device3.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "consumable-capacity-rejection-rolls-back-constraints": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            # claim0 consumes all of device1's capacity first. Its request is not
            # subject to claim1's constraint, so it does not set the reference value.
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1)
                .withCapacityRequest(two)
                .withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].stringAttribute == "cap"''', driverA),
                        )
                    )
                ),
            ),
            # claim1 has a match-attribute constraint. Its first (all-mode)
            # subrequest includes device1, which was capacity-sufficient when the
            # candidate list was built but is now full, so it is rejected on the
            # in-function capacity check after being added to the constraint. The
            # fallback subrequest then needs device2, whose attribute differs.
            claim(claim1)
            .withConstraints(DeviceConstraint(MatchAttribute=stringAttribute))
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].stringAttribute == "cap"''', driverA),
                            )
                        ),
                    )
                    .withAllocationMode(DeviceAllocationModeAll)
                    .withCapacityRequest(two),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].stringAttribute == "fb"''', driverA),
                            )
                        ),
                    ),
                )
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {capacity0: two},
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("cap")),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("fb")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        # claim1's all-mode subReq0 adds device1 to the match constraint and is then
        # rejected because claim0 already consumed device1's capacity. Rolling back
        # that rejected candidate's constraint entry is what lets the fallback
        # subReq1 take device2; otherwise device1's leaked attribute value blocks it.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
            allocationResult(
                localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False)
            ),
        ],
    ),
    "partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            # claim0 pins device1 as the first share and reserves its single
            # shared counter.
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].kind == "shared"''', driverA),
                        )
                    ),
                ),
            ),
            # claim1's req1 first tries device1 as a second share (skipping the
            # counter, since claim0 already reserved it), but the match-attribute
            # constraint with req2 forces it to backtrack onto device2. req3 then
            # shares device1 again, after req1 has already left it.
            claimWithRequests(
                claim1,
                [
                    DeviceConstraint(MatchAttribute=stringAttribute, Requests=[req1, req2]),
                ],
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                r'''device.attributes["%s"].kind == "shared" || device.attributes["%s"].kind == "fallback"''',
                                driverA,
                                driverA,
                            ),
                        )
                    ),
                ),
                request(
                    req2,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].kind == "gate"''', driverA),
                        )
                    ),
                ),
                request(
                    req3,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].kind == "shared"''', driverA),
                        )
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                # device1: allow-multiple, no capacity, consumes the single counter.
                # kind steers the selectors; stringAttribute steers the constraint.
                device(
                    device1,
                    None,
                    {
                        "kind": DeviceAttribute(StringValue=("shared")),
                        "stringAttribute": DeviceAttribute(StringValue=("red")),
                    },
                )
                .withAllowMultipleAllocations()
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": MustParse("1")}),
                ),
                # device2: the fallback for req1, matching req2's stringAttribute.
                device(
                    device2,
                    None,
                    {
                        "kind": DeviceAttribute(StringValue=("fallback")),
                        "stringAttribute": DeviceAttribute(StringValue=("blue")),
                    },
                ),
                # device3: the only device req2 can take.
                device(
                    device3,
                    None,
                    {
                        "kind": DeviceAttribute(StringValue=("gate")),
                        "stringAttribute": DeviceAttribute(StringValue=("blue")),
                    },
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"c": MustParse("1")}),
            ),
        ),
        node=node(node1, region1),
        # claim0 reserves device1's counter as the first share. claim1's req1 tries
        # device1 as a second share, skips the counter, then backtracks onto device2
        # because of the constraint with req2. Rolling back that empty-capacity share
        # must not drop device1's shared marker, because claim0's share still holds
        # the counter. req3 then shares device1 again without recharging the counter.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceAllocationResult(req2, driverA, pool1, device3, False),
                deviceRequestAllocationResult(req3, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
        ],
    ),
    "partitionable-devices-prioritized-list": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-devices": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
                request(req1, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-capacity-pools": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "cpus": MustParse("4"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "cpus": MustParse("6"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "cpus": MustParse("4"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
                counterSet(
                    counterSet2,
                    {
                        "cpus": MustParse("8"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-counters": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
                request(req1, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                            "cpus": MustParse("6"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "cpus": MustParse("4"),
                            "memory": MustParse("2Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                            "cpus": MustParse("4"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "cpus": MustParse("6"),
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                            "cpus": MustParse("4"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "cpus": MustParse("4"),
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "cpus": MustParse("8"),
                        "memory": MustParse("18Gi"),
                    },
                ),
                counterSet(
                    counterSet2,
                    {
                        "cpus": MustParse("12"),
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-pools": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
                request(req1, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpus": MustParse("6"),
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpus": MustParse("4"),
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpus": MustParse("4"),
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "cpus": MustParse("8"),
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpus": MustParse("6"),
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpus": MustParse("1"),
                            "memory": MustParse("7Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpus": MustParse("1"),
                            "memory": MustParse("7Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool2, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "cpus": MustParse("8"),
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device2),
            MakeDeviceID(driverA, pool1, device3),
            MakeDeviceID(driverA, pool2, device1),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool2, device2, False),
                deviceAllocationResult(req1, driverA, pool2, device3, False),
            )
        ],
    ),
    "partitionable-devices-unused-counters-in-counter-set": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("5Gi"),
                        },
                    ),
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                        "unused": MustParse("1Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-no-capacity-available": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("16Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool1,
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device2),
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-overallocated-capacity-pool": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("20Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool1,
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device2),
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-disabled-device-consumes-counters": AllocatorTestCase(
        features=Features(
            PartitionableDevices=False,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool1,
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-disabled-other-device-do-not-consume-counters": AllocatorTestCase(
        features=Features(
            PartitionableDevices=False,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, None, None),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "partitionable-devices-disabled-per-device-node-selection": AllocatorTestCase(
        features=Features(
            PartitionableDevices=False,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                pool1,
                driverA,
                device(device2, None, None).withNodeSelection(node1),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-per-device-node-selection-nodename": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withNodeSelection(node1),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                )
                .withNodeSelection(node2),
            ),
            sliceWithCounterSets(
                slice2,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    ),
    "partitionable-devices-per-device-node-selection-node-selector": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withNodeSelection(nodeLabelSelector(regionKey, region1)),
            ),
            sliceWithCounterSets(
                slice2,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                NodeSelector(
                    NodeSelectorTerms=[
                        NodeSelectorTerm(
                            MatchExpressions=[
                                NodeSelectorRequirement(Key=regionKey, Operator=NodeSelectorOpIn, Values=[region1]),
                            ],
                        )
                    ],
                ),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 3),
                request(req1, classB, 3),
            ),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withNodeSelection(nodeLabelSelector(regionKey, region1)),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withNodeSelection(node1),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withNodeSelection(nodeSelectionAll),
            ),
            sliceWithCounterSets(
                slice2,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("18Gi"),
                    },
                ),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 2),
                driverB,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool2, 2),
                driverB,
                counterSet(
                    counterSet2,
                    {
                        "memory": MustParse("12Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                NodeSelector(
                    NodeSelectorTerms=[
                        NodeSelectorTerm(
                            MatchFields=[
                                NodeSelectorRequirement(Key=fieldNameKey, Operator=NodeSelectorOpIn, Values=[node1]),
                            ],
                        )
                    ],
                ),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1, driverB, pool2, device1, False),
                deviceAllocationResult(req1, driverB, pool2, device2, False),
                deviceAllocationResult(req1, driverB, pool2, device3, False),
            )
        ],
    ),
    "tainted-two-devices": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ),
        node=node(node1, region1),
    ),
    "tainted-one-device-two-taints": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute),
            )
        ),
        node=node(node1, region1),
    ),
    "tainted-two-devices-tolerated": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA).withTolerations(tolerationNoExecute)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(
                    req0, driverA, pool1, device2, False, tolerationNoExecute
                ),  # Only second device's taints are tolerated.
            )
        ],
    ),
    "tainted-two-devices-prioritized-list-tolerated": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1),
                    subRequest(subReq1, classA, 1, tolerationNoExecute),
                )
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(
                    req0SubReq1, driverA, pool1, device2, False, tolerationNoExecute
                ),  # Only second device's taints are tolerated.
            )
        ],
    ),
    "tainted-no-effect": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNone),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "tainted-one-device-two-taints-both-tolerated": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(
            claimWithRequest(claim0, req0, classA).withTolerations(tolerationNoSchedule, tolerationNoExecute)
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False, tolerationNoSchedule, tolerationNoExecute),
            )
        ],
    ),
    "tainted-disabled": AllocatorTestCase(
        features=Features(
            DeviceTaints=False,
        ),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "tainted-prioritized-list": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classB, 1),
                    subRequest(subReq1, classA, 1),
                )
            )
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
    ),
    "tainted-prioritized-list-disabled": AllocatorTestCase(
        features=Features(
            DeviceTaints=False,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classB, 1),
                    subRequest(subReq1, classA, 1),
                )
            )
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    ),
    "tainted-all-devices-single": AllocatorTestCase(
        features=Features(
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
    ),
    "tainted-all-devices-single-disabled": AllocatorTestCase(
        features=Features(
            DeviceTaints=False,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-allocation-mode-all": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 0).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(subReq1, classA, 1),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device2),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors": AllocatorTestCase(
        # When using allocationMode:All, at least one device must be allocated, otherwise
        # DRA will attempt the next subRequest.
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v6"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v5"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v5")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": AllocatorTestCase(
        # All devices selected by the DeviceClass will be allocated, even if they
        # are spread across different resource pools.
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v6"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v5"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v5")),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v5")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device1, False),
            ),
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": AllocatorTestCase(
        # All devices selected by the DeviceClass will be allocated, even if they
        # are spread across different resource pools, as long as they are available
        # on the node.
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v6"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v5"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v5")),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node2,
                pool2,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v5")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v6")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            ),
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": AllocatorTestCase(
        # Only devices selected by the deviceclass will be considered
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v6"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].generation == "v5"''', driverA),
                            ),
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                ),
            ),
        ),
        classes=objects(
            DeviceClass(
                ObjectMeta=ObjectMeta(
                    Name=classA,
                ),
                Spec=DeviceClassSpec(
                    Selectors=[
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.driver == "%s" && device.attributes["%s"].selected""", driverA, driverA
                                ),
                            ),
                        ),
                    ],
                ),
            ),
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v6")),
                        "selected": DeviceAttribute(BoolValue=(False)),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v5")),
                        "selected": DeviceAttribute(BoolValue=(False)),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=("v5")),
                        "selected": DeviceAttribute(BoolValue=(True)),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device3, False),
            ),
        ],
    ),
    "max-number-devices": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, AllocationResultsMaxSize),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                *multipleDeviceAllocationResults(req0, driverA, pool1, AllocationResultsMaxSize, 0),
            )
        ],
    ),
    "partitionable-devices-with-attribute-selector": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 2),
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r"""device.attributes["%s"].special""", driverA),
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device1,
                    None,
                    {
                        "special": DeviceAttribute(
                            BoolValue=(True),
                        ),
                    },
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpu1": MustParse("1"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "mem": MustParse("10Gi"),
                        },
                    ),
                ),
                device(
                    device2,
                    None,
                    {
                        "special": DeviceAttribute(
                            BoolValue=(False),
                        ),
                    },
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpu2": MustParse("1"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "mem": MustParse("10Gi"),
                        },
                    ),
                ),
                device(
                    device3,
                    None,
                    {
                        "special": DeviceAttribute(
                            BoolValue=(False),
                        ),
                    },
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "cpu3": MustParse("1"),
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "mem": MustParse("10Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "cpu1": MustParse("1"),
                        "cpu2": MustParse("1"),
                        "cpu3": MustParse("1"),
                    },
                ),
                counterSet(
                    counterSet2,
                    {
                        "mem": MustParse("30Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-max-allocation-limit-request": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, AllocationResultsMaxSize),
                    subRequest(subReq1, classA, AllocationResultsMaxSize // 2),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(subReq0, classA, AllocationResultsMaxSize),
                    subRequest(subReq1, classA, AllocationResultsMaxSize // 2),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize * 2)
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                *Concat(
                    multipleDeviceAllocationResults(req0SubReq1, driverA, pool1, AllocationResultsMaxSize // 2, 0),
                    multipleDeviceAllocationResults(
                        req1SubReq1, driverA, pool1, AllocationResultsMaxSize // 2, AllocationResultsMaxSize // 2
                    ),
                ),
            )
        ],
        expectNumAllocateOneInvocations=75,
    ),
    "prioritized-list-max-allocation-allocation-mode-all": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 0).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(subReq1, classA, 2),
                ),
                deviceRequest(req1, classB, 2),
            ),
        ),
        classes=objects(klass(classA, driverA), klass(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize - 1),
            sliceWithMultipleDevices(slice2, node1, pool2, driverB, 2),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, "device-0", False),
                deviceAllocationResult(req0SubReq1, driverA, pool1, "device-1", False),
                deviceAllocationResult(req1, driverB, pool2, "device-0", False),
                deviceAllocationResult(req1, driverB, pool2, "device-1", False),
            )
        ],
        expectNumAllocateOneInvocations=42,
    ),
    "device-binding-conditions": AllocatorTestCase(
        features=Features(
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "binding-conditions-multiple-devices": AllocatorTestCase(
        features=Features(
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2), request(req1, classA, 1))),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, None, None).withBindingConditions(["IsPrepare2"], ["BindingFailed2"]),
                device(device3, None, None).withBindingConditions(["IsPrepare3"], ["BindingFailed3"]),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req1, driverA, pool1, device3, ["IsPrepare3"], ["BindingFailed3"]
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "binding-conditions-with-and-without": AllocatorTestCase(
        features=Features(
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceAllocationResult(req0, driverA, pool1, device1, False),
                        deviceRequestAllocationResultWithBindingConditions(
                            req1, driverA, pool1, device2, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "binding-conditions-without-feature-gate": AllocatorTestCase(
        features=Features(
            DeviceBindingAndStatus=False,
        ),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "node-restriction": AllocatorTestCase(
        features=Features(
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeLabelSelector(planetKey, planetValueEarth),
                pool1,
                driverA,
                device(device1, None, None).withBindsToNode(True),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "partitionable-devices-with-binding-conditions": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "partitionable-devices-with-binding-conditions-multiple": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 2),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsPrepare2"], ["BindingFailed2"]),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 3),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("2Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("2Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsReady"], ["BindingTimeout"]),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, None, None),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device3, ["IsReady"], ["BindingTimeout"]
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "partitionable-devices-with-binding-conditions-multi-slices": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice4,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            ),
            sliceWithCounterSets(
                slice3,
                node1,
                resourcePool(pool1, 4),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 4),
                driverA,
                counterSet(
                    counterSet2,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, None, None),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "partitionable-devices-with-binding-conditions-and-taints": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            DeviceBindingAndStatus=True,
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"])
                .withTaints(
                    DeviceTaint(
                        Key="key1",
                        Value="value1",
                        Effect=DeviceTaintEffectNoSchedule,
                    )
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool1,
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            DeviceBindingAndStatus=True,
            DeviceTaints=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 2)).withTolerations(tolerationNoScheduleKey1),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"])
                .withTaints(
                    DeviceTaint(
                        Key="key1",
                        Value="value1",
                        Effect=DeviceTaintEffectNoSchedule,
                    )
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"], tolerationNoScheduleKey1
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, None, None, tolerationNoScheduleKey1
                        ),
                    ],
                ),
                NodeSelector=localNodeSelector(node1),
            ),
        ],
    ),
    "consumable-capacity-disabled-feature": AllocatorTestCase(
        features=Features(
            DeviceBindingAndStatus=True,  # add to forcefully use experimenting allocator
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrap(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
            )
        ),
    ),
    "consumable-capacity-disabled-feature-with-prioritized-list": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
            DeviceBindingAndStatus=True,  # add to forcefully use experimenting allocator
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1).withCapacityRequest(one),
                    subRequest(subReq1, classA, 1).withCapacityRequest(one),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrap(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
            )
        ),
    ),
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity1: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity1: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[  # both share the same device; no capacity is consumed since none is defined.
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[  # both should get full capacity for different devices
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],  # should not satisfy both
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[  # both requests applied the default request (two)
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: zero}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: zero}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[  # both requests allocated to the same device
            allocationResult(
                localNodeSelector(node1),
                # capacity must be rounded up to default minimum (two)
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                # capacity must be rounded up to default minimum (two)
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(3, BinarySI))),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                # capacity must be rounded up with Step (3 to 2+2 = 4)
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: four}
                ),
            ),
        ],
    ),
    "consumable-capacity-range-policy-request-above-int64-rejected": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        # A capacity request above MaxInt64 cannot be rounded on the integer Step path
        # without reading it through Quantity.Value(), which wraps. The request is not
        # representable, so allocation aborts with a specific error instead of skipping.
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(MustParse("18446744073709551616"))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("cannot be represented")),
    ),
    "consumable-capacity-range-policy-rounded-value-overflow-rejected": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        # Rounding a MaxInt64 request up to the next Step multiple passes MaxInt64 and
        # would wrap to a negative value. The rounded value is not representable, so
        # allocation aborts with a specific error instead of acting on the wrapped read.
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(MustParse("9223372036854775807"))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("cannot be represented")),
    ),
    "consumable-capacity-range-policy-overflow-aborts-not-skip": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        # device-1 has a Step range, so a request above MaxInt64 overflows its integer
        # rounding. device-2 has no Step and could satisfy the same request by exact
        # comparison, but a not-representable request is fail-closed: allocation aborts
        # rather than skipping device-1 to allocate device-2. Aborting on the first
        # overflowing device is what stops the backtracking a user-controlled
        # out-of-range request would otherwise force.
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(MustParse("18446744073709551616"))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
                device(device2, {capacity0: MustParse("36893488147419103232")}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("cannot be represented")),
    ),
    "consumable-capacity-range-policy-allocation-mode-all-overflow-aborts": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        # The all-devices pre-scan in validateDeviceRequest validates capacity too. An
        # out-of-range request must abort there, not silently drop the overflowing
        # device from the set and allocate whatever remains. The count-mode cases above
        # exercise allocateOne; this one exercises the AllocationModeAll pre-scan.
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(MustParse("18446744073709551616"))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("cannot be represented")),
    ),
    "consumable-capacity-negative-request-aborts": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        # A stored request or slice from before stricter validation could carry a
        # negative capacity, which admission does not re-check on existing objects. A
        # negative value must abort rather than record negative consumed capacity and
        # over-allocate the device.
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(MustParse("-5"))),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: MustParse("10")}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("negative")),
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(2, BinarySI))),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(one, {capacity0: four}, [two]),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(2, BinarySI))),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(
                    one, {capacity0: three}, [three]
                ),  # capacity value must be explicitly added
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: three}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(6, BinarySI))),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: NewQuantity(10, BinarySI)}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],  # default max requestPolicy is 4, should not allocate even though 6 < 10
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two)),
        ),
        allocatedCapacityDevices={
            MakeDeviceID(driverA, pool1, device1): {
                capacity0: (two),
            },
        },
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two)),
        ),
        allocatedCapacityDevices={
            MakeDeviceID(driverA, pool1, device1): {
                capacity0: (two),
            },
        },
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
                device(device2, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-with-multi-allocatable-device-backtrack": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            # 2 requests with two per each
            claim(claim0)
            .withConstraints(DeviceConstraint(MatchAttribute=stringAttribute))
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(two),
                deviceRequest(req1, classA, 1).withCapacityRequest(two),
            ),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue1")),
                    },
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue2")),
                    },
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-subrequest": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1).withCapacityRequest(four),
                    subRequest(subReq1, classA, 1).withCapacityRequest(two),
                    subRequest(subReq1, classA, 1),
                ),
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0SubReq1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two)),
        ),
        allocatedCapacityDevices={
            MakeDeviceID(driverA, pool1, device1): {
                capacity0: (two),
            },
        },
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(two)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, None, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[  # only match device is allocated
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(two)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[  # only match device is allocated
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one),
                allDeviceRequest(req1, classA).withCapacityRequest(one),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        allocatedCapacityDevices={
            MakeDeviceID(driverA, pool1, device1): {
                capacity0: (one),
            },
        },
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(one),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one),
                allDeviceRequest(req1, classA).withCapacityRequest(one),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        allocatedCapacityDevices={
            MakeDeviceID(driverA, pool1, device1): {
                capacity0: (one),
            },
        },
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(one),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],  # device-1 capacity-exhausted but still matches; All fails, not device-2 only
    ),
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
        ],
    ),
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-requests-are-not-modified": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(two),
                deviceRequest(req1, classA, 1).withCapacityRequest(MustParse("1000000000000000000000")),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {
                        capacity0: DeviceCapacity(
                            Value=MustParse("1000000000000000000002"),
                            RequestPolicy=CapacityRequestPolicy(
                                Default=(MustParse("1000000000000000000000")),
                                ValidRange=CapacityRequestPolicyRange(
                                    Min=two,
                                ),
                            ),
                        ),
                    },
                    None,
                ).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: MustParse("1000000000000000000000")}
                ),
            )
        ],
    ),
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
        ],
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ),
        allocatedCapacityDevices={
            MakeDeviceID(driverA, pool1, device1): {
                capacity0: (one),
            },
        },
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-with-partitionable-device": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
            PartitionableDevices=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0""", driverA
                                ),
                            )
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withAllowMultipleAllocations(),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                )
                .withAllowMultipleAllocations(),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("4Gi"),
                        },
                    ),
                )
                .withAllowMultipleAllocations(),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {"memory": MustParse("4Gi")}
                ),
                deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device3).withConsumedCapacity(
                    fixedShareID, {"memory": MustParse("4Gi")}
                ),
            )
        ],
    ),
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1)
                .withCapacityRequest(one)
                .withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].mode == "b"''', driverA),
                        ),
                    )
                ),
            ),
        ),
        allocatedSharedDeviceIDs=setsNew(
            MakeSharedDeviceID(MakeDeviceID(driverA, pool1, device1), fixedShareID),
        ),
        allocatedCapacityDevices={
            MakeDeviceID(driverA, pool1, device1): {
                capacity0: (one),
            },
        },
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device1,
                    fromCounters,
                    {
                        "mode": DeviceAttribute(StringValue=("a")),
                    },
                )
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            capacity0: one,
                        },
                    ),
                )
                .withAllowMultipleAllocations(),
                device(
                    device2,
                    fromCounters,
                    {
                        "mode": DeviceAttribute(StringValue=("b")),
                    },
                )
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            capacity0: one,
                        },
                    ),
                )
                .withAllowMultipleAllocations(),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        capacity0: one,
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "partitionable-consumable-capacity-shared-device-counter-not-recharged": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            ConsumableCapacity=True,
        ),
        # device1 already has a persisted shared allocation. It is represented
        # only by a share ID, with no AggregatedCapacity entry.
        allocatedSharedDeviceIDs=setsNew(
            MakeSharedDeviceID(MakeDeviceID(driverA, pool1, device1), fixedShareID),
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "c": MustParse("1"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "c": MustParse("1"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            )
        ],
    ),
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": AllocatorTestCase(
        # This test case combines integration of PrioritizedList, PartitionableDevices, and ConsumableCapacity features.
        features=Features(
            PrioritizedList=True,
            PartitionableDevices=True,
            ConsumableCapacity=True,
        ),
        # There are two basic requests (req0 and req2), requesting 1 and 2 units of capacity0, respectively.
        # In addition, there is one request (req1) with a prioritized list.
        # The prioritized request prefers devices with capacity0 >= 4 over those with capacity0 >= 2.
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one),
                deviceRequest(req2, classA, 1).withCapacityRequest(two),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"]["%s"].compareTo(quantity("4")) >= 0""", driverA, capacity0
                                ),
                            )
                        ),
                    ).withCapacityRequest(one),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"]["%s"].compareTo(quantity("2")) >= 0""", driverA, capacity0
                                ),
                            )
                        ),
                    ).withCapacityRequest(one),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        # There three device option consuming counters from the PartitionableDevices's CounterSet.
        # All devices can be allocated multiple times with `allowMultipleAllocations=True`.
        # CounterSet (4, 8)
        #   device1, device2, and device3 consume (2,4), (4,4), and (2,4) for (capacity0, capacity1) respectively.
        #   i.e., only two options are valid those are [device1, device3] or [device2].
        # Capacity.RequestPolicy of ConsumableCapacity forces the capacity1 consuming with range policy (min,step,max)=(2,2,4).
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            capacity0: two,
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            capacity1: four,
                        },
                    ),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            capacity0: four,
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            capacity1: four,
                        },
                    ),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            capacity0: two,
                        },
                    ),
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            capacity1: four,
                        },
                    ),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        capacity0: four,
                    },
                ),
                counterSet(
                    counterSet2,
                    {
                        capacity1: MustParse("8"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        # Expected results:
        #   - [req0] The scheduler should be able to allocate device1 to req0.
        #     1 unit of capacity0 is consumed according to the requested capacity, and 2 units of capacity1 are consumed according to the RequestPolicy.
        #   - [req2] device1 does not have enough capacity0 remaining for req2, which requests 2 units (only 1 unit remains).
        #     The scheduler must also skip device2 due to the CounterSet constraint.
        #     Therefore, device3 is allocated to req2, providing 2 units of capacity0 and 2 units of capacity1.
        #   - [req1] The first prioritized subrequest of req1 cannot find a device because device2 cannot be selected.
        #     The second prioritized subrequest is then chosen and consumes the remaining 1 unit of capacity0 on device1.
        #     Consequently, device1 is allocated to subreq1 of req1 with 1 unit of capacity0 and 2 units of capacity1.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one, capacity1: two}
                ),
                deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(
                    fixedShareID, {capacity0: two, capacity1: two}
                ),
                deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one, capacity1: two}
                ),
            )
        ],
    ),
    "with-distinct-constraints": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0, req1]),
                DeviceConstraint(DistinctAttribute=versionAttribute, Requests=[req0, req1, req2]),
                DeviceConstraint(DistinctAttribute=intAttribute, Requests=[req0, req1, req2, req3]),
            )
            .withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
                deviceRequest(req2, classA, 1),
                deviceRequest(req3, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                        "numa": DeviceAttribute(IntValue=(int64(0))),
                        "boolAttribute": DeviceAttribute(BoolValue=(True)),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.1")),
                        "numa": DeviceAttribute(IntValue=(int64(1))),
                        "boolAttribute": DeviceAttribute(BoolValue=(False)),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device3,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.2")),
                        "numa": DeviceAttribute(IntValue=(int64(2))),
                        "boolAttribute": DeviceAttribute(BoolValue=(True)),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device4,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=("1.0.0")),
                        "numa": DeviceAttribute(IntValue=(int64(3))),
                        "boolAttribute": DeviceAttribute(BoolValue=(True)),
                    },
                ).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req3, driverA, pool1, device4).withConsumedCapacity(fixedShareID, None),
            )
        ],
    ),
    "distinct-constraint-single-request-count-3-not-distinct": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 3)),
        ),
        classes=objects(klass(classA, driverA)),
        # req0 asks for 3 devices under a DistinctAttribute(stringAttribute)
        # constraint. Three devices exist with stringAttribute values
        # value1, value2, value1 -- only two distinct values.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value2")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        # Expected results:
        #   - [req0] No allocation. Satisfying req0 requires 3 devices with
        #     distinct stringAttribute values, but device1 and device3 both
        #     have "value1", so no set of 3 distinct-valued devices exists.
        expectResults=None,
    ),
    "distinct-constraint-single-request-count-3-all-distinct": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 3)),
        ),
        classes=objects(klass(classA, driverA)),
        # req0 asks for 3 devices under a DistinctAttribute(stringAttribute)
        # constraint. Three devices exist with distinct values
        # value1, value2, value3.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value2")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value3")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        # Expected results:
        #   - [req0] All three devices are allocated: their stringAttribute
        #     values (value1, value2, value3) are pairwise distinct, so the
        #     constraint holds.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "distinct-constraint-two-requests-with-count-not-distinct": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(DistinctAttribute=stringAttribute, Requests=[req0, req1]),
            )
            .withRequests(
                deviceRequest(req0, classA, 2),
                deviceRequest(req1, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        # req0 asks for 2 devices and req1 for 1 device; a single
        # DistinctAttribute(stringAttribute) constraint covers both requests,
        # so all 3 allocated devices must be distinct. Three devices exist
        # with values value1, value2, value1 -- only two distinct values.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value2")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        # Expected results:
        #   - No allocation. The constraint spans req0 and req1, so the 3
        #     devices across both requests must be pairwise distinct. Because
        #     device1 and device3 share "value1", 3 distinct-valued devices
        #     cannot be chosen.
        expectResults=None,
    ),
    "with-distinct-constraints-attribute-not-set": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0]),
            )
            .withRequests(
                deviceRequest(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "with-distinct-constraints-unknown-type-attribute": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0]),
            )
            .withRequests(
                deviceRequest(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"boolAttribute": DeviceAttribute()}).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
        expectError=MatchError(ContainSubstring("unsupported attribute value")),
    ),
    "with-distinct-constraints-with-subrequests": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
            PrioritizedList=True,
        ),
        # There are three requests, all preferring the boolAttribute.
        # However, the DeviceConstraint applies only to the first two requests.
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0, req1]))
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r"""device.attributes["%s"].boolAttribute""", driverA),
                            )
                        ),
                    ),
                    subRequest(subReq1, classA, 1),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r"""device.attributes["%s"].boolAttribute""", driverA),
                            )
                        ),
                    ),
                    subRequest(subReq1, classA, 1),
                ),
                requestWithPrioritizedList(
                    req2,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r"""device.attributes["%s"].boolAttribute""", driverA),
                            )
                        ),
                    ),
                    subRequest(subReq1, classA, 1),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValue=(True)),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device2,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValue=(False)),
                    },
                ).withAllowMultipleAllocations(),
            ),
        ),
        node=node(node1, region1),
        # Because the constraint applies only to req0 and req1,
        # subreq0 cannot satisfy req1, so device2 (subreq1) is allocated instead.
        # However, req2 has no such constraint and can use device1 (subreq0).
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0SubReq0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, None
                ),
                deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, None
                ),
                deviceRequestAllocationResult(req2SubReq0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, None
                ),
            )
        ],
    ),
    "distinct-constraint-single-request-multiple-devices-attribute-not-set": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=intAttribute)],
                request(req0, classA, 3),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
                device(device3, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "distinct-constraint-single-request-not-enough-distinct-values": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=intAttribute)],
                request(req0, classA, 3),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(1))),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(2))),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(2))),
                    },
                ),
                device(
                    device4,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(2))),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "distinct-constraint-single-request-multiple-devices-attribute-set": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=intAttribute)],
                request(req0, classA, 3),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(1))),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(2))),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(1))),
                    },
                ),
                device(
                    device4,
                    None,
                    {
                        "numa": DeviceAttribute(IntValue=(int64(3))),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device4, False),
            )
        ],
    ),
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(DistinctAttribute=stringAttribute))
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one),
                deviceRequest(req1, classA, 1).withCapacityRequest(one),
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue"))},
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    ),
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": AllocatorTestCase(
        features=Features(
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(DistinctAttribute=stringAttribute))
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(two),
                deviceRequest(req1, classA, 1).withCapacityRequest(two),
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device1,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue1"))},
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValue=("stringAttributeValue2"))},
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    ),
    # Test cases for DRAFractionalCapacityRange feature
    "consumable-capacity-fractional-range-gate-disabled": AllocatorTestCase(
        # FractionalCapacityRange is off: step arithmetic uses Value(), which rounds
        # sub-integer quantities up to 1.  With min=1, step=1, request=1:
        # added=0, n=0 → consumed = min + step*0 = 1 (DecimalSI, from step's format).
        features=Features(
            ConsumableCapacity=True,
            # FractionalCapacityRange intentionally not set
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(pointTwo)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withFractionalCapacityRequestPolicyRange(
                    {capacity0: one},
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                # Integer path: Value() of 200m and 100m both round up to 1,
                # so min=1, step=1, added=0 → result = NewQuantity(1, DecimalSI).
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID,
                    {
                        capacity0: NewQuantity(1, DecimalSI),
                    },
                ),
            ),
        ],
    ),
    "consumable-capacity-fractional-range-gate-enabled-round-up": AllocatorTestCase(
        # FractionalCapacityRange on: 250m is between min=200m and next step=300m,
        # so it is rounded up to 300m (milli-arithmetic: (250-200)/100 rounds up to 1 step).
        features=Features(
            ConsumableCapacity=True,
            FractionalCapacityRange=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(pointTwoFive)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withFractionalCapacityRequestPolicyRange(
                    {capacity0: one},
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                # Milli path: (250m - 200m) / 100m = 0.5 → ceil → 1 step → 200m + 100m = 300m.
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID,
                    {
                        capacity0: pointThree,
                    },
                ),
            ),
        ],
    ),
    # Test cases for DRAListTypeAttributes features (matchAttributes/distinctAttributes)
    "list-attributes-match-constaint-scalar-string-values": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "list-attributes-match-constaint-list-of-string-values-with-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3", "value4"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 3)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3"]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value3", "value1"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constraint-backtrack-needs-intersection-restore": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(MatchAttribute=stringAttribute)],
                request(req0, classA, 3),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1"]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2"]),
                    },
                ),
                device(
                    device4,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req0, driverA, pool1, device4, False),
            )
        ],
    ),
    "list-attributes-match-constaint-list-of-string-values-without-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(MatchAttribute=stringAttribute)],
                request(req0, classA, 1),
                request(req0, classA, 1),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value3", "value4"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(MatchAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 3)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-list-of-int-values-with-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=intAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "numa": DeviceAttribute(IntValues=[0, 1, 2]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "numa": DeviceAttribute(IntValues=[1, 2, 3]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    # KEP-6072: standardized numaNode attribute, list form. Two devices whose
    # numaNode lists share an element (physical node + same-socket equidistant
    # nodes) are co-placed by matchAttribute set intersection.
    "numanode-matchattribute-overlapping-lists-are-co-placed": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=numaNodeAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "kubernetes.io/numaNode": DeviceAttribute(IntValues=[4]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "kubernetes.io/numaNode": DeviceAttribute(IntValues=[4, 5, 6, 7]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    # KEP-6072: numaNode lists with no common element (different NUMA domains)
    # cannot satisfy matchAttribute, so no allocation is made.
    "numanode-matchattribute-disjoint-lists-are-not-allocated": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=numaNodeAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "kubernetes.io/numaNode": DeviceAttribute(IntValues=[0]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "kubernetes.io/numaNode": DeviceAttribute(IntValues=[4, 5, 6, 7]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-list-of-bool-values-with-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=boolAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValues=[True, False]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValues=[True]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "list-attributes-match-constaint-list-of-version-values-with-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=versionAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValues=["1.0.0", "1.1.0", "2.0.0"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValues=["1.1.0", "2.0.0", "2.1.0"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "list-attributes-match-constaint-with-empty-or-unknown-type": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=[]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("unsupported attribute value")),
    ),
    "list-attributes-disabled-match-constraint-with-lists": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=False,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3", "value4"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-scalar-string-values-all-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value2")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "list-attributes-distinct-constraint-scalar-string-values-not-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-single-request-count-3-not-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 3)),
        ),
        classes=objects(klass(classA, driverA)),
        # Same scenario as distinct-constraint-single-request-count-3-not-distinct
        # but with the ListTypeAttributes feature enabled: req0 asks for 3
        # devices under a DistinctAttribute constraint, and the 3 devices carry
        # values value1, value2, value1 -- only two distinct values.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value2")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        # Expected results:
        #   - [req0] No allocation. device1 and device3 both have "value1",
        #     so 3 devices with distinct stringAttribute values cannot be found.
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-single-request-count-3-all-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 3)),
        ),
        classes=objects(klass(classA, driverA)),
        # Same scenario as distinct-constraint-single-request-count-3-all-distinct
        # but with the ListTypeAttributes feature enabled: req0 asks for 3
        # devices under a DistinctAttribute constraint, and the 3 devices carry
        # distinct values value1, value2, value3.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value2")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value3")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        # Expected results:
        #   - [req0] All three devices are allocated: their stringAttribute
        #     values (value1, value2, value3) are pairwise distinct.
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "list-attributes-distinct-constraint-list-of-string-values-all-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3"]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value3", "value4"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "list-attributes-distinct-constraint-list-of-string-values-with-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value4", "value5"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValue=("value1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-list-of-int-values-all-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=intAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "numa": DeviceAttribute(IntValues=[0, 1]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "numa": DeviceAttribute(IntValues=[1, 2]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "numa": DeviceAttribute(IntValues=[2, 3]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "list-attributes-distinct-constraint-list-of-bool-values-all-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=boolAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValues=[True]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValues=[True, False]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "boolAttribute": DeviceAttribute(BoolValues=[False]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "list-attributes-distinct-constraint-list-of-version-values-all-distinct": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=versionAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValues=["1.0.0", "1.1.0"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValues=["1.1.0", "2.0.0"]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValues=["2.0.0", "2.1.0"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "list-attributes-distinct-constaint-with-empty-or-unknown-type": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=versionAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValues=[]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValues=None),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("unsupported attribute value")),
    ),
    "list-attributes-disabled-distinct-constraint-with-lists": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=False,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value2", "value3", "value4"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-backtrack-needs-remove": AllocatorTestCase(
        features=Features(
            ListTypeAttributes=True,
            ConsumableCapacity=True,
        ),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(
                    Requests=[req0, req1, req2],
                    DistinctAttribute=stringAttribute,
                ),
            )
            .withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
                deviceRequest(req2, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"]),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value3", "value4", "value5"]),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value1", "value2"]),
                    },
                ),
                device(
                    device4,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value3", "value4"]),
                    },
                ),
                device(
                    device0,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(StringValues=["value5", "value6"]),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1, driverA, pool1, device4, False),
                deviceAllocationResult(req2, driverA, pool1, device0, False),
            )
        ],
    ),
    "allocation-mode-all-with-multi-host-resource-pool": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice2,
                node2,
                resourcePool(pool1, 2),
                driverA,
                device(device2, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
        ],
    ),
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device1, None, None),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 4),
                driverA,
                counterSet(counterSet1, None),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device2, None, None),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool1, 4),
                driverA,
                counterSet(counterSet1, None),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, None),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, None),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("8Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "other-memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("8Gi"),
                        },
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool2,
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0""", driverA
                                ),
                            ),
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    r"""device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0""", driverA
                                ),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 3),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("2Gi"),
                        },
                    ),
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
            ),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device3),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False),
            )
        ],
    ),
    "partitionable-devices-devices-consume-counter-set-in-different-nodes": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 3),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("2Gi"),
                        },
                    ),
                ),
            ),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
        ],
        node=node(node2, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node2),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-validation-error-on-non-targeting-slice": AllocatorTestCase(
        features=Features(
            PartitionableDevices=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 3),
                driverA,
                counterSet(
                    counterSet1,
                    {
                        "memory": MustParse("8Gi"),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet2,
                        {
                            "memory": MustParse("6Gi"),
                        },
                    ),
                ),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    ),
    "different-resourceslices-in-pool-can-target-different-nodes": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node2,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device2, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    ),
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 1),
                driverA,
                device(device2, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool2, device2, False),
            )
        ],
    ),
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 1),
                driverA,
                device(device2, None, None),
            ),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool2, device2),
        ],
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    ),
    "no-allocation-from-incomplete-pools": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1),
            ),
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
        ),
        node=node(node1, region1),
    ),
    "check-combinations-within-single-request-single-pool-single-slice": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 5),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
                device(device3, None, None),
                device(device4, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={
            Stable: 65,
        },
    ),
    "check-combinations-within-single-request-single-pool-multiple-slices": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 5),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device3, None, None),
                device(device4, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={
            Stable: 65,
        },
    ),
    "check-combinations-within-single-request-multiple-pools-multiple-slices": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 5),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device2, None, None),
            ),
            sliceWithDevices(
                slice3,
                node1,
                pool2,
                driverA,
                device(device3, None, None),
                device(device4, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={
            Stable: 65,
        },
    ),
    "check-combinations-within-single-request-many-pools": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 5),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(device2, None, None),
            ),
            sliceWithDevices(
                slice3,
                node1,
                pool3,
                driverA,
                device(device3, None, None),
            ),
            sliceWithDevices(
                slice4,
                node1,
                pool4,
                driverA,
                device(device4, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={
            Stable: 65,
        },
    ),
    "check-combinations-with-backtracking": AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                # req-1 needs two generic devices.
                request(req1, classA, 2),
                # req-2 needs a specific device.
                request(
                    req2,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].type == "X"''', driverA),
                        ),
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        # The order of devices is chosen such that the allocator
        # will initially pick {device1, device2} for req1. This will fail
        # because req-2 needs device1. The allocator has to
        # backtrack. The correct solution is {device2, device3} for req-1
        # and {device1} for req-2. The optimized allocator avoids
        # testing {device2, device1} for req-1 and thus finds the solution
        # faster.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("X")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("Y")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("Y")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
                deviceAllocationResult(req2, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={
            Stable: 14,
        },
    ),
    "check-combinations-with-backtracking-across-slices-and-pools": AllocatorTestCase(
        features=Features(
            DeviceBindingAndStatus=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                # req-1 needs two generic devices.
                request(req1, classA, 2),
                # req-2 needs a specific device.
                request(
                    req2,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(r'''device.attributes["%s"].type == "X"''', driverA),
                        ),
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        # The order of devices is chosen such that the allocator
        # will initially pick {device1, device2} for req1. This will fail
        # because req-2 needs device1. The allocator has to
        # backtrack. The correct solution is {device2, device3} for req-1
        # and {device1} for req-2. The optimized allocator avoids
        # testing {device2, device1} for req-1 and thus finds the solution
        # faster.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device1,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("X")),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device2,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("Y")),
                    },
                ),
            ),
            # Use a binding condition here to make sure pool2 is searched after pool1 when
            # trying to allocate devices. This makes sure we see the same results every time.
            sliceWithDevices(
                slice3,
                node1,
                pool2,
                driverA,
                device(
                    device3,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("Y")),
                    },
                ).withBindingConditions(["IsPrepare"], []),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceRequestAllocationResultWithBindingConditions(req1, driverA, pool2, device3, ["IsPrepare"], []),
                deviceAllocationResult(req2, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={
            Stable: 14,
        },
    ),
    "check-combinations-with-prioritized-list": AllocatorTestCase(
        features=Features(
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                # The first alternative can't be satisfied since there aren't enough devices
                # of type Y, but the allocator will try all devices before finding out.
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        3,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].type == "Y"''', driverA),
                            ),
                        ),
                    ),
                    subRequest(subReq1, classA, 2),
                ),
                # The first subrequest asks for too many devices, so the second
                # have to be chosen.
                requestWithPrioritizedList(
                    req2,
                    subRequest(subReq0, classA, 2),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(r'''device.attributes["%s"].type == "X"''', driverA),
                            ),
                        ),
                    ),
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        # The order of devices is chosen such that the allocator
        # will initially pick {device1, device2} for req1. This will fail
        # because req-2 needs device1. The allocator has to
        # backtrack. The correct solution is {device2, device3} for req-1
        # and {device1} for req-2. The optimized allocator avoids
        # testing {device2, device1} for req-1 and thus finds the solution
        # faster.
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("X")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("Y")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "type": DeviceAttribute(StringValue=("Y")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
                deviceAllocationResult(req2SubReq1, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=26,
        expectNumAllocateOneInvocationsByChannel={
            Stable: 32,
        },
    ),
    # "derived-attributes" is the primary test case. It mirrors the
    # cross-request hardware alignment example from the KEP.
    # It defines two requests and synthesizes a virtual grouping
    # key ("sharedNumaNode") across their differing
    # attribute names. The allocator must backtrack past the
    # incompatible first device to successfully co-allocate.
    "derived-attributes": AllocatorTestCase(
        features=Features(
            DerivedAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(
                        Requests=[req0, req1],
                        MatchAttribute=(FullyQualifiedName("derived/sharedNumaNode")),
                    ),
                ],
                requestWithDerivedAttributes(
                    req0,
                    classA,
                    1,
                    [
                        DeviceDerivedAttribute(
                            Name="derived/sharedNumaNode",
                            Expression=Sprintf(r"""device.attributes["%s"]["numa"]""", driverA),
                        ),
                    ],
                ),
                requestWithDerivedAttributes(
                    req1,
                    classB,
                    1,
                    [
                        DeviceDerivedAttribute(
                            Name="derived/sharedNumaNode",
                            Expression=Sprintf(r"""device.attributes["%s"]["numaNode"]""", driverB),
                        ),
                    ],
                ),
            )
        ),
        classes=objects(
            klass(classA, driverA),
            klass(classB, driverB),
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device2,
                    None,
                    {
                        "numa": DeviceAttribute(StringValue=("numa-0")),
                    },
                ),
                device(
                    device1,
                    None,
                    {
                        "numa": DeviceAttribute(StringValue=("numa-1")),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverB,
                device(
                    device3,
                    None,
                    {
                        "numaNode": DeviceAttribute(StringValue=("numa-1")),
                    },
                ),
                device(
                    device4,
                    None,
                    {
                        "numaNode": DeviceAttribute(StringValue=("numa-2")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverB, pool2, device3, False),
            )
        ],
    ),
    # "derived-attributes-with-prioritized-list" verifies that
    # the allocator correctly evaluates derived attributes that are
    # defined differently across alternatives in a prioritized list.
    # It expects the allocator to skip the first alternative (because its
    # derived attribute violates the cross-request match constraint)
    # and successfully allocate using the second alternative which
    # correctly satisfies the constraint with the other request.
    "derived-attributes-with-prioritized-list": AllocatorTestCase(
        features=Features(
            DerivedAttributes=True,
            PrioritizedList=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(
                        Requests=[req0, req1],
                        MatchAttribute=(FullyQualifiedName("derived/match")),
                    ),
                ],
                requestWithPrioritizedList(
                    req0,
                    # First alternative pulls physical attribute "foo" ("A").
                    # This won't match req1 which pulls "baz" ("B").
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        [
                            DeviceDerivedAttribute(
                                Name=FullyQualifiedName("derived/match"),
                                Expression=Sprintf(r"""device.attributes["%s"]["foo"]""", driverA),
                            ),
                        ],
                    ),
                    # Second alternative pulls physical attribute "bar" ("B").
                    # This matches req1.
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        [
                            DeviceDerivedAttribute(
                                Name=FullyQualifiedName("derived/match"),
                                Expression=Sprintf(r"""device.attributes["%s"]["bar"]""", driverA),
                            ),
                        ],
                    ),
                ).obj(),
                requestWithDerivedAttributes(
                    req1,
                    classB,  # Notice req1 uses classB (driverB)
                    1,
                    [
                        DeviceDerivedAttribute(
                            Name=FullyQualifiedName("derived/match"),
                            Expression=Sprintf(r"""device.attributes["%s"]["baz"]""", driverB),
                        ),
                    ],
                ),
            )
        ),
        classes=objects(
            klass(classA, driverA),
            klass(classB, driverB),
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "foo": DeviceAttribute(StringValue=("A")),
                        "bar": DeviceAttribute(StringValue=("B")),
                    },
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverB,
                device(
                    device2,
                    None,
                    {
                        "baz": DeviceAttribute(StringValue=("B")),
                    },
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverB, pool2, device2, False),
            )
        ],
    ),
    # "derived-attributes-override" verifies that derived
    # attributes shadow/override physical attributes of the same
    # name. It also proves that this shadowing is strictly
    # request-scoped and does not leak or affect other requests
    # (which continue to fall back to physical attributes).
    "derived-attributes-override": AllocatorTestCase(
        features=Features(
            DerivedAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(
                        # Require match on "myAttr".
                        Requests=[req0, req1],
                        MatchAttribute=(FullyQualifiedName("dra.example.com/myAttr")),
                    ),
                ],
                requestWithDerivedAttributes(
                    req0,
                    classA,
                    1,
                    [
                        DeviceDerivedAttribute(
                            # Overrides physical attribute to "value-2".
                            Name=FullyQualifiedName("dra.example.com/myAttr"),
                            Expression=r'''"value-2"''',
                        ),
                    ],
                ),
                # Falls back to physical attribute.
                request(req1, classA, 1),
            )
        ),
        classes=objects(klass(classA, "dra.example.com")),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                "dra.example.com",
                # Mismatched physical attributes.
                device(
                    device1,
                    None,
                    {
                        "myAttr": DeviceAttribute(StringValue=("value-1")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "myAttr": DeviceAttribute(StringValue=("value-2")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                # req0 overridden to "value-2" -> device1. req1 uses physical "value-2" -> device2.
                deviceAllocationResult(req0, "dra.example.com", pool1, device1, False),
                deviceAllocationResult(req1, "dra.example.com", pool1, device2, False),
            )
        ],
    ),
    # "derived-attributes-cel-missing-attribute" verifies that
    # CEL runtime evaluation errors (such as looking up a key
    # that isn't defined on a candidate device) are caught
    # immediately. The allocator aborts allocation and
    # propagates the explicit CEL error, preventing silent
    # topology matching failures.
    "derived-attributes-cel-missing-attribute": AllocatorTestCase(
        features=Features(
            DerivedAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(
                        Requests=[req0],
                        MatchAttribute=(FullyQualifiedName("derived/missing")),
                    ),
                ],
                requestWithDerivedAttributes(
                    req0,
                    classA,
                    1,
                    [
                        DeviceDerivedAttribute(
                            Name=FullyQualifiedName("derived/missing"),
                            Expression=Sprintf(r"""device.attributes["%s"]["missingAttr"]""", driverA),
                        ),
                    ],
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "existingAttr": DeviceAttribute(StringValue=("yes")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("no such key: missingAttr")),
    ),
    # "derived-attributes-type-mismatch" verifies that when CEL
    # dynamically evaluates to different value types for the same
    # attribute across candidate devices (e.g., string vs int),
    # the MatchAttribute constraint safely rejects the mismatch
    # rather than panicking or throwing an unhandled error.
    "derived-attributes-type-mismatch": AllocatorTestCase(
        features=Features(
            DerivedAttributes=True,
        ),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(
                        Requests=[req0],
                        MatchAttribute=(FullyQualifiedName("derived/myAttr")),
                    ),
                ],
                requestWithDerivedAttributes(
                    req0,
                    classA,
                    2,
                    [
                        DeviceDerivedAttribute(
                            Name=FullyQualifiedName("derived/myAttr"),
                            Expression=Sprintf(r"""device.attributes["%s"]["static"]""", driverA),
                        ),
                    ],
                ),
            )
        ),
        classes=objects(klass(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "static": DeviceAttribute(StringValue=("value")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "static": DeviceAttribute(IntValue=(int64(1))),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    ),
}
