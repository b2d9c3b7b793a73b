package api

import (
	"bytes"
	"math"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkOrder checks that keys built from values by build are in the order of less, pairwise.
func checkOrder[T any](t *testing.T, name string, values []T, less func(a, b T) bool, build func(T) SortKey) {
	t.Helper()
	for i, a := range values {
		for j, b := range values {
			got := bytes.Compare(build(a), build(b)) < 0
			if want := less(a, b); got != want {
				t.Errorf("%s: key(%v) < key(%v) = %v, want %v", name, values[i], values[j], got, want)
			}
		}
	}
}

func TestSortKeyInt64(t *testing.T) {
	vs := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 40, -256, -1, 0, 1, 255, 256, 1 << 40, math.MaxInt64 - 1,
		math.MaxInt64}
	checkOrder(t, "Int64", vs, func(a, b int64) bool { return a < b }, func(v int64) SortKey { return SortKey{}.Int64(v) })
	checkOrder(t, "Int64Desc", vs, func(a, b int64) bool { return a > b },
		func(v int64) SortKey { return SortKey{}.Int64Desc(v) })
	us := []uint64{0, 1, 255, 256, 1 << 63, math.MaxUint64}
	checkOrder(t, "Uint64", us, func(a, b uint64) bool { return a < b },
		func(v uint64) SortKey { return SortKey{}.Uint64(v) })
}

func TestSortKeyTime(t *testing.T) {
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ts := []time.Time{{}, time.Unix(-5, 999), time.Unix(0, 0), base, base.Add(time.Nanosecond), base.Add(999 * time.Millisecond),
		base.Add(time.Second), base.Add(1000 * time.Hour), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}
	checkOrder(t, "Time", ts, func(a, b time.Time) bool { return a.Before(b) },
		func(v time.Time) SortKey { return SortKey{}.Time(v) })
	checkOrder(t, "TimeDesc", ts, func(a, b time.Time) bool { return a.After(b) },
		func(v time.Time) SortKey { return SortKey{}.TimeDesc(v) })
	// Another zone is the same instant.
	if !bytes.Equal(SortKey{}.Time(base), SortKey{}.Time(base.In(time.FixedZone("x", 3600)))) {
		t.Error("Time depends on the location")
	}
}

func TestSortKeyStringsWithPrefixesAndZeros(t *testing.T) {
	ss := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x01", "a", "a\x00", "a\x00b", "a\x01", "ab", "abc", "b",
		"\xff", "\xff\x00"}
	checkOrder(t, "String", ss, func(a, b string) bool { return a < b },
		func(v string) SortKey { return SortKey{}.String(v) })
	// Two fields: the first string decides, whatever follows it (a prefix first).
	type pair struct{ a, b string }
	ps := []pair{{"", "zzz"}, {"a", ""}, {"a", "\x00"}, {"a", "b"}, {"a\x00", ""}, {"ab", ""}, {"ab", "a"}, {"b", ""}}
	checkOrder(t, "String,String", ps, func(x, y pair) bool {
		if x.a != y.a {
			return x.a < y.a
		}
		return x.b < y.b
	}, func(v pair) SortKey { return SortKey{}.String(v.a).String(v.b) })
	// A string then an int: "a" with any number before "ab".
	if bytes.Compare(SortKey{}.String("a").Int64(math.MaxInt64), SortKey{}.String("ab").Int64(math.MinInt64)) >= 0 {
		t.Error(`("a", max) is not before ("ab", min)`)
	}
}

func TestSortKeyComposite(t *testing.T) {
	type q struct {
		prio int64
		ts   time.Time
		name string
	}
	t0 := time.Unix(1000, 0)
	qs := []q{{10, t0, "b"}, {10, t0, "a"}, {10, t0.Add(-time.Second), "z"}, {-3, t0, "a"}, {0, time.Time{}, ""},
		{100, t0.Add(time.Hour), "x"}}
	checkOrder(t, "prio desc, time, name", qs, func(a, b q) bool {
		if a.prio != b.prio {
			return a.prio > b.prio
		}
		if !a.ts.Equal(b.ts) {
			return a.ts.Before(b.ts)
		}
		return a.name < b.name
	}, func(v q) SortKey { return SortKey{}.Int64Desc(v.prio).Time(v.ts).String(v.name) })
	if !bytes.Equal(SortKey{}.Bool(false), []byte{0}) || !bytes.Equal(SortKey{}.Bool(true).Bytes(), []byte{1}) {
		t.Error("Bool encoding")
	}
}

type prioritySort struct{}

func (prioritySort) SortKey(p QueuedPodInfo) SortKey {
	prio := int32(0)
	if p.Pod().Spec.Priority != nil {
		prio = *p.Pod().Spec.Priority
	}
	return SortKey{}.Int64Desc(int64(prio)).Time(p.Timestamp)
}

func TestLessAndQueuedPodInfo(t *testing.T) {
	mk := func(name string, prio int32, ts int64) QueuedPodInfo {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Priority: &prio}}
		return QueuedPodInfo{PodInfo: PodOf(pod), Timestamp: time.Unix(ts, 0)}
	}
	pods := []QueuedPodInfo{mk("low-old", 1, 1), mk("high-new", 9, 5), mk("high-old", 9, 2), mk("low-new", 1, 7)}
	sort.SliceStable(pods, func(i, j int) bool { return Less(prioritySort{}, pods[i], pods[j]) })
	var got []string
	for _, p := range pods {
		got = append(got, p.GetPodInfo().Pod().Name)
	}
	want := []string{"high-old", "high-new", "low-old", "low-new"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
