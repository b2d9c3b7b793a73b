"""Go's integer bounds (math.MaxInt32, ...): the API's int32/int64 fields and kube's arithmetic limits."""

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT32_MAX = (1 << 32) - 1
UINT64_MAX = (1 << 64) - 1

# (min, max) ranges, for range checks that name the Go type.
INT32 = (INT32_MIN, INT32_MAX)
INT64 = (INT64_MIN, INT64_MAX)
UINT32 = (0, UINT32_MAX)
UINT64 = (0, UINT64_MAX)
