"""The test cases of dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go
(kube 1.37.2, TestAllocator's table) that exercise what the incubating allocator adds to the stable one:
consumable capacity and shared devices, binding conditions, distinctAttribute constraints (and the
cases gated by features it does not support, which are skipped as kube skips them). Translated
mechanically from the Go literal: same names, same comments, same expectations."""

# ruff: noqa: E501

from tests.plugins.dra_allocatortesting import (
    AllocationResult,
    AllocatorTestCase,
    BinarySI,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CELDeviceSelector,
    ContainSubstring,
    DecimalSI,
    DeviceAllocationModeAll,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceConstraint,
    DeviceSelector,
    DeviceTaint,
    DeviceTaintEffectNoSchedule,
    Features,
    MakeDeviceID,
    MakeSharedDeviceID,
    MatchError,
    MustParse,
    NewQuantity,
    Sprintf,
    Stable,
    allDeviceRequest,
    allocationResult,
    boolAttribute,
    capacity0,
    capacity1,
    claim,
    claim0,
    claim1,
    claimWithRequest,
    claimWithRequests,
    classA,
    classWithAllowMultipleAllocations,
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
    deviceCounterConsumption,
    deviceCounterConsumptionWithGroups,
    deviceRequest,
    deviceRequestAllocationResult,
    deviceRequestAllocationResultWithBindingConditions,
    driverA,
    fixedShareID,
    four,
    fromCounters,
    int64,
    intAttribute,
    klass,
    localNodeSelector,
    node,
    node1,
    nodeLabelSelector,
    objects,
    one,
    planetKey,
    planetValueEarth,
    pointThree,
    pointTwo,
    pointTwoFive,
    pool1,
    pool2,
    region1,
    req0,
    req0SubReq0,
    req0SubReq1,
    req1,
    req1SubReq1,
    req2,
    req2SubReq0,
    req3,
    request,
    requestWithPrioritizedList,
    resourcePool,
    setsNew,
    slice1,
    slice2,
    slice3,
    slice4,
    sliceWithCounterSets,
    sliceWithDevices,
    sliceWithOneDevice,
    stringAttribute,
    subReq0,
    subReq1,
    subRequest,
    three,
    tolerationNoScheduleKey1,
    two,
    unwrap,
    unwrapResourceSlices,
    versionAttribute,
    zero,
)

CASES: dict[str, AllocatorTestCase] = {
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
}
