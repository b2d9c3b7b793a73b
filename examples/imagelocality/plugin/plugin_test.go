//go:build !wasip1

package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

func containers(images ...string) []corev1.Container {
	var cs []corev1.Container
	for _, img := range images {
		cs = append(cs, corev1.Container{Image: img})
	}
	return cs
}

func image(sizeMB int64, names ...string) corev1.ContainerImage {
	return corev1.ContainerImage{Names: names, SizeBytes: sizeMB * mb}
}

func makeImageNode(name string, images ...corev1.ContainerImage) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Images: images}}
}

// imageStates is what the scheduler's snapshot computes: per node, each of its image names with
// the image's size and the number of nodes that have that name.
func imageStates(nodes []*corev1.Node) map[string]map[string]api.ImageStateSummary {
	numNodes := map[string]int{}
	for _, n := range nodes {
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				numNodes[name]++
			}
		}
	}
	out := map[string]map[string]api.ImageStateSummary{}
	for _, n := range nodes {
		states := map[string]api.ImageStateSummary{}
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				states[name] = api.ImageStateSummary{Size: img.SizeBytes, NumNodes: numNodes[name]}
			}
		}
		out[n.Name] = states
	}
	return out
}

func fakeDigest(content string) string {
	h := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(h[:])
}

// Cases ported from kube-scheduler's image_locality_test.go (TestImageLocalityPriority), with the
// scores of maxThreshold = 1000MB per image; plus image volumes, which wasmsched's in-tree
// ImageLocality counts too.
func TestImageLocalityPriority(t *testing.T) {
	test40250 := corev1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/250")}
	test40300 := corev1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/300")}
	testMinMax := corev1.PodSpec{Containers: containers("gcr.io/10", "gcr.io/4000")}
	test300600900 := corev1.PodSpec{Containers: containers("gcr.io/300", "gcr.io/600", "gcr.io/900")}
	test3040 := corev1.PodSpec{Containers: containers("gcr.io/30", "gcr.io/40")}
	test30Init300 := corev1.PodSpec{
		InitContainers: containers("gcr.io/30"),
		Containers:     containers("gcr.io/300"),
	}
	testDigest := corev1.PodSpec{Containers: containers("gcr.io/250@" + fakeDigest("250"))}
	testImageVolume := corev1.PodSpec{
		Containers: containers("gcr.io/10"),
		Volumes: []corev1.Volume{{Name: "models", VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: "gcr.io/4000"}}}},
	}

	node403002000 := []corev1.ContainerImage{
		image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
		image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
		image(2000, "gcr.io/2000:latest"),
	}
	node25010 := []corev1.ContainerImage{
		image(250, "gcr.io/250:latest"),
		image(10, "gcr.io/10:latest", "gcr.io/10:v1"),
	}
	node60040900 := []corev1.ContainerImage{
		image(600, "gcr.io/600:latest"),
		image(40, "gcr.io/40:latest"),
		image(900, "gcr.io/900:latest"),
	}
	node300600900 := []corev1.ContainerImage{
		image(300, "gcr.io/300:latest"),
		image(600, "gcr.io/600:latest"),
		image(900, "gcr.io/900:latest"),
	}
	node400030 := []corev1.ContainerImage{
		image(400, "gcr.io/400:latest"),
		image(30, "gcr.io/30:latest"),
	}
	node203040 := []corev1.ContainerImage{
		image(20, "gcr.io/20:latest"),
		image(30, "gcr.io/30:latest"),
		image(40, "gcr.io/40:latest"),
	}
	node4000 := []corev1.ContainerImage{image(4000, "gcr.io/4000:latest")}
	node250Digest := []corev1.ContainerImage{image(250, "gcr.io/250@"+fakeDigest("250"), "gcr.io/250:latest")}

	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*corev1.Node
		want  []int64
	}{
		{
			// Node1: gcr.io/40:latest 40MB: 40M/2 < 23M, min-threshold: 0.
			// Node2: gcr.io/250:latest 250MB: 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5.
			name:  "two images spread on two nodes, prefer the larger image one",
			pod:   &corev1.Pod{Spec: test40250},
			nodes: []*corev1.Node{makeImageNode("node1", node403002000...), makeImageNode("node2", node25010...)},
			want:  []int64{0, 5},
		},
		{
			// Node1: 100 * ((40M + 300M)/2 - 23M) / (1000M * 2 - 23M) = 7. Node2: none: 0.
			name:  "two images on one node, prefer this node",
			pod:   &corev1.Pod{Spec: test40300},
			nodes: []*corev1.Node{makeImageNode("node1", node403002000...), makeImageNode("node2", node25010...)},
			want:  []int64{7, 0},
		},
		{
			// Node1: gcr.io/4000 4000MB: 4000M/2 >= 1000M * 2, max-threshold: 100.
			// Node2: gcr.io/10 10MB: 10M/2 < 23M: 0.
			name:  "if exceed limit, use limit",
			pod:   &corev1.Pod{Spec: testMinMax},
			nodes: []*corev1.Node{makeImageNode("node1", node4000...), makeImageNode("node2", node25010...)},
			want:  []int64{MaxNodeScore, 0},
		},
		{
			// Node1: 100 * (4000M/3 - 23M) / (1000M * 2 - 23M) = 66. Node2: 10M/3 < 23M: 0. Node3: 0.
			name: "if exceed limit, use limit (with node which has no images present)",
			pod:  &corev1.Pod{Spec: testMinMax},
			nodes: []*corev1.Node{makeImageNode("node1", node4000...), makeImageNode("node2", node25010...),
				makeImageNode("node3")},
			want: []int64{66, 0, 0},
		},
		{
			// Node1: 100 * (600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 32.
			// Node2: 100 * (300M/3 + 600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 36. Node3: 0.
			name: "pod with multiple large images, node2 is preferred",
			pod:  &corev1.Pod{Spec: test300600900},
			nodes: []*corev1.Node{makeImageNode("node1", node60040900...), makeImageNode("node2", node300600900...),
				makeImageNode("node3")},
			want: []int64{32, 36, 0},
		},
		{
			// Node1: 30M * 2/3 < 23M: 0. Node2: 30M * 2/3 + 40M/3 = 33.3M: 100 * 10.3M / 1977M = 0.
			name: "pod with multiple small images",
			pod:  &corev1.Pod{Spec: test3040},
			nodes: []*corev1.Node{makeImageNode("node1", node400030...), makeImageNode("node2", node203040...),
				makeImageNode("node3")},
			want: []int64{0, 0, 0},
		},
		{
			// Init containers count: Node1: 100 * (30M/2 + 300M/2 - 23M) / (1000M * 2 - 23M) = 7.
			// Node2: 30M/2 < 23M: 0.
			name:  "pod with init containers",
			pod:   &corev1.Pod{Spec: test30Init300},
			nodes: []*corev1.Node{makeImageNode("node1", append(node403002000, image(30, "gcr.io/30:latest"))...), makeImageNode("node2", node400030...)},
			want:  []int64{7, 0},
		},
		{
			// A digest reference is not normalized: it matches the node's digest name.
			// Node1: 100 * (250M/2 - 23M) / (1000M - 23M) = 10.
			name:  "image by digest",
			pod:   &corev1.Pod{Spec: testDigest},
			nodes: []*corev1.Node{makeImageNode("node1", node250Digest...), makeImageNode("node2", node25010...)},
			want:  []int64{10, 0},
		},
		{
			// The image volume counts as an image: Node1: 100 * (4000M/2 - 23M) / (1000M * 2 - 23M) = 100.
			name:  "image volume",
			pod:   &corev1.Pod{Spec: testImageVolume},
			nodes: []*corev1.Node{makeImageNode("node1", node4000...), makeImageNode("node2", node25010...)},
			want:  []int64{MaxNodeScore, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := &corev1.NodeList{}
			for _, n := range tt.nodes {
				list.Items = append(list.Items, *n)
			}
			nodeList, err := list.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			h := hosttest.Install(t, &hosttest.Host{NodeList: nodeList})

			pl, err := New(nil)
			if err != nil {
				t.Fatal(err)
			}
			states := imageStates(tt.nodes)
			var infos []api.NodeInfo
			for _, n := range tt.nodes {
				infos = append(infos, api.NodeInfoOf(n, states[n.Name]))
			}
			state := api.NewCycleState()
			pod := api.PodOf(tt.pod)
			if s := pl.PreScore(state, pod, infos); !s.IsSuccess() {
				t.Fatalf("PreScore: %v", s)
			}
			var got []int64
			for _, ni := range infos {
				score, s := pl.Score(state, pod, ni)
				if !s.IsSuccess() {
					t.Fatalf("Score(%s): %v", ni.Name(), s)
				}
				got = append(got, score)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("scores = %v, want %v", got, tt.want)
			}
			// The node count is read once per cycle, in PreScore.
			if n := h.Calls["nodeList"]; n != 1 {
				t.Errorf("nodeList fetched %d times, want 1", n)
			}
		})
	}
}

func TestNormalizedImageName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"root", "root:latest"},
		{"gcr.io:5000/root", "gcr.io:5000/root:latest"},
		{"root:tag", "root:tag"},
		{"gcr.io:5000/root:tag", "gcr.io:5000/root:tag"},
		{"root@" + fakeDigest("root"), "root@" + fakeDigest("root")},
		{"", ":latest"},
	} {
		if got := normalizedImageName(tc.in); got != tc.want {
			t.Errorf("normalizedImageName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCalculatePriority(t *testing.T) {
	for _, tc := range []struct {
		sum        int64
		containers int
		want       int64
	}{
		{0, 1, 0},
		{minThreshold, 1, 0},
		{maxContainerThreshold, 1, 100},
		{maxContainerThreshold + 1, 1, 100},
		{maxContainerThreshold, 2, 49},
		{(minThreshold + maxContainerThreshold) / 2, 1, 50},
		{0, 0, 0}, // a pod without images: the divisor is negative, the result still 0
	} {
		if got := calculatePriority(tc.sum, tc.containers); got != tc.want {
			t.Errorf("calculatePriority(%d, %d) = %d, want %d", tc.sum, tc.containers, got, tc.want)
		}
	}
}

func TestScoreWithoutPreScore(t *testing.T) {
	pl := &ImageLocality{}
	_, s := pl.Score(api.NewCycleState(), api.PodOf(&corev1.Pod{}), api.NodeInfoOf(makeImageNode("n"), nil))
	if s.GetCode() != api.Error {
		t.Errorf("Score without PreScore: %v, want Error", s)
	}
}

func TestPreScoreEmptySnapshotSkips(t *testing.T) {
	pl := &ImageLocality{listNodes: func() []api.NodeInfo { return nil }}
	if s := pl.PreScore(api.NewCycleState(), api.PodOf(&corev1.Pod{}), nil); !s.IsSkip() {
		t.Errorf("PreScore: %v, want Skip", s)
	}
}

func TestNew(t *testing.T) {
	for _, c := range []string{"", " ", "{}", " {} "} {
		if _, err := New([]byte(c)); err != nil {
			t.Errorf("New(%q): %v", c, err)
		}
	}
	for _, c := range []string{`{"x":1}`, `[]`, `{`} {
		if _, err := New([]byte(c)); err == nil {
			t.Errorf("New(%q): no error", c)
		}
	}
	// The image states the host sends decode into ImageStateSummary.
	var states map[string]api.ImageStateSummary
	if err := json.Unmarshal([]byte(`{"img":{"Size":187000000,"NumNodes":2}}`), &states); err != nil ||
		states["img"] != (api.ImageStateSummary{Size: 187000000, NumNodes: 2}) {
		t.Errorf("decoded %v, %v", states, err)
	}
}
