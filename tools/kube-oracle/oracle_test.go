package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The expectations below are derived from kube-scheduler's code, not from running the oracle:
// NodeResourcesFit rejects a request above allocatable as UnschedulableAndUnresolvable and one that
// only lacks free room as Unschedulable; FitError sorts its "<count> <reason>" histogram as strings;
// DefaultPreemption's message on success is "found a potential placement for pod on node N,
// preempting K victims", prefixed "preemption: " by the plugin.

func TestMain(m *testing.M) {
	if err := setUp(0, os.Stderr); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

const nodes = `
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 2Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "1", memory: 2Gi, pods: "10"}}
`

func evaluate(t *testing.T, mode, manifests, config string) *Result {
	t.Helper()
	docs, _, err := splitDocuments([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	var cfg json.RawMessage
	if config != "" {
		cfg = json.RawMessage(config)
	}
	c, err := DecodeCase(docs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(c, mode)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func status(t *testing.T, a *Attempt, node string) *StatusRecord {
	t.Helper()
	s, ok := a.Filter[node].(*StatusRecord)
	if !ok {
		t.Fatalf("%s: filter[%s] = %v, want a status", a.Pod, node, a.Filter[node])
	}
	return s
}

func TestCycleFitErrorMessageCountsReasonsPerNode(t *testing.T) {
	r := evaluate(t, "cycle", nodes+`
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3}}
spec: {taints: [{key: dedicated, value: infra, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 2Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: busy}
spec: {nodeName: n2, containers: [{name: c, image: i, resources: {requests: {cpu: 500m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]}
`, "")
	if len(r.Attempts) != 1 {
		t.Fatalf("attempts = %d, want 1 (the running pod is not pending)", len(r.Attempts))
	}
	a := r.Attempts[0]
	want := "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
	if a.Code != "Unschedulable" || a.Message != want {
		t.Errorf("code, message = %q, %q; want Unschedulable, %q", a.Code, a.Message, want)
	}
	if s := status(t, a, "n1"); s.Code != "UnschedulableAndUnresolvable" || s.Plugin != "NodeResourcesFit" ||
		!reflect.DeepEqual(s.Reasons, []string{"Insufficient cpu"}) {
		t.Errorf("n1 = %+v", s)
	}
	if s := status(t, a, "n3"); s.Plugin != "TaintToleration" {
		t.Errorf("n3 = %+v", s)
	}
	if a.Node != nil || len(a.Best) != 0 || len(a.Scores) != 0 {
		t.Errorf("node %v, best %v, scores %v; want none", a.Node, a.Best, a.Scores)
	}
	if a.Victims != nil || a.PreemptionCandidates != nil {
		t.Error("cycle mode printed run-mode fields")
	}
}

func TestCyclePreFilterResultExcludesNodes(t *testing.T) {
	r := evaluate(t, "cycle", nodes+`
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3}}
status: {allocatable: {cpu: "1", memory: 2Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: i}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [n2]}]
`, "")
	a := r.Attempts[0]
	if !reflect.DeepEqual(a.PreFilter.NodeNames, []string{"n2"}) || a.PreFilter.Code != "Success" {
		t.Errorf("preFilter = %+v", a.PreFilter)
	}
	s := status(t, a, "n1")
	if s.Code != "UnschedulableAndUnresolvable" || s.Plugin != "" ||
		!reflect.DeepEqual(s.Reasons, []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}) {
		t.Errorf("n1 = %+v", s)
	}
	if s := status(t, a, "n3"); s.Reasons[0] != "node(s) didn't satisfy plugin(s) [NodeAffinity]" {
		t.Errorf("n3 = %+v", s)
	}
	// One feasible node: chosen without scoring.
	if a.Filter["n2"] != "ok" || !reflect.DeepEqual(a.Best, []string{"n2"}) || a.Node == nil || *a.Node != "n2" || len(a.Scores) != 0 {
		t.Errorf("filter %v best %v node %v scores %v; want n2 alone, unscored", a.Filter, a.Best, a.Node, a.Scores)
	}
}

func TestCycleEquallyGoodNodesChooseTheSmallestName(t *testing.T) {
	r := evaluate(t, "cycle", nodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]}
`, "")
	a := r.Attempts[0]
	if !reflect.DeepEqual(a.Best, []string{"n1", "n2"}) || *a.Node != "n1" {
		t.Errorf("best %v node %v; want [n1 n2], n1", a.Best, *a.Node)
	}
	if a.Scores["n1"]["total"] != a.Scores["n2"]["total"] || a.Scores["n1"]["TaintToleration"] != 300 {
		t.Errorf("scores = %v", a.Scores)
	}
}

const preemptionCase = nodes + `
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: low-b}
spec: {nodeName: n2, containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: low-a}
spec: {nodeName: n1, containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: high}
spec: {priorityClassName: high, containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
`

func TestRunPreemptionNominatesThenBinds(t *testing.T) {
	r := evaluate(t, "run", preemptionCase, "")
	if len(r.Attempts) != 2 {
		t.Fatalf("attempts = %d, want 2", len(r.Attempts))
	}
	first, second := r.Attempts[0], r.Attempts[1]
	want := "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 1 victims"
	if first.Code != "Unschedulable" || first.Message != want {
		t.Errorf("first: %q %q, want Unschedulable %q", first.Code, first.Message, want)
	}
	if s := status(t, first, "n1"); s.Code != "Unschedulable" {
		t.Errorf("n1 = %+v; a node that preemption can free is Unschedulable", s)
	}
	if first.NominatedNode == nil || *first.NominatedNode != "n1" ||
		!reflect.DeepEqual(*first.Victims, []string{"default/low-a"}) ||
		!reflect.DeepEqual(*first.PreemptionCandidates, []string{"n1", "n2"}) {
		t.Errorf("first: nominated %v victims %v candidates %v", first.NominatedNode, *first.Victims, *first.PreemptionCandidates)
	}
	// The retry takes the nominated-node fast path: only n1 is evaluated.
	if len(second.Filter) != 1 || second.Filter["n1"] != "ok" || second.Code != "Success" || *second.Node != "n1" {
		t.Errorf("second: filter %v code %s node %v", second.Filter, second.Code, second.Node)
	}
	if len(*second.Victims) != 0 || len(*second.PreemptionCandidates) != 0 || second.NominatedNode != nil {
		t.Errorf("second: victims %v candidates %v nominated %v", *second.Victims, *second.PreemptionCandidates, second.NominatedNode)
	}
	final := r.Final["default/high"]
	if final == nil || final.Node == nil || *final.Node != "n1" {
		t.Errorf("final = %+v", final)
	}
}

func TestRunIsDeterministic(t *testing.T) {
	first, err := json.Marshal(evaluate(t, "run", preemptionCase, ""))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		again, err := json.Marshal(evaluate(t, "run", preemptionCase, ""))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, again)
		}
	}
}

func TestConfigWithoutScorePluginsGivesEveryFeasibleNodeOne(t *testing.T) {
	config := `{"profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
		{"name": "PrioritySort"}, {"name": "NodeResourcesFit"}, {"name": "DefaultBinder"}]},
		"score": {"disabled": [{"name": "*"}]}}}]}`
	r := evaluate(t, "cycle", nodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: i}]}
`, config)
	a := r.Attempts[0]
	want := map[string]map[string]int64{"n1": {"total": 1}, "n2": {"total": 1}}
	if !reflect.DeepEqual(a.Scores, want) || !reflect.DeepEqual(a.Best, []string{"n1", "n2"}) || *a.Node != "n1" {
		t.Errorf("scores %v best %v node %v", a.Scores, a.Best, *a.Node)
	}
}

func TestServeAnswersEveryLineWithItsID(t *testing.T) {
	docs, _, err := splitDocuments([]byte(preemptionCase))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(map[string]any{"id": "a", "mode": "cycle", "config": nil, "objects": docs})
	in := string(good) + "\n" +
		`{"id": 7, "mode": "fly", "objects": []}` + "\n" +
		`{"id": "b", "mode": "cycle", "objects": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"priorityClassName": "nope"}}]}` + "\n" +
		`not json` + "\n"
	var out bytes.Buffer
	if err := Serve(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d answer lines, want 4:\n%s", len(lines), out.String())
	}
	var answers []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, m)
	}
	if answers[0]["id"] != "a" || answers[0]["mode"] != "cycle" || answers[0]["error"] != nil {
		t.Errorf("answer 0 = %v", answers[0])
	}
	if answers[1]["id"] != float64(7) || !strings.Contains(answers[1]["error"].(string), "fly") {
		t.Errorf("answer 1 = %v", answers[1])
	}
	if answers[2]["id"] != "b" || !strings.Contains(answers[2]["error"].(string), "no PriorityClass with name nope") {
		t.Errorf("answer 2 = %v", answers[2])
	}
	if answers[3]["id"] != nil || answers[3]["error"] == nil {
		t.Errorf("answer 3 = %v", answers[3])
	}
}

// A document kube cannot decode is named by file and document number on the command line.
func TestBadManifestNamesFileAndDocument(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pods.yaml")
	bad := "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 5}\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runFiles("cycle", "", nil, []string{dir})
	if err == nil || !strings.HasPrefix(err.Error(), path+": document 2: ") {
		t.Fatalf("error = %v, want it to start with %q", err, path+": document 2: ")
	}
}
