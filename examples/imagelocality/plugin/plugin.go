// Package plugin is kube-scheduler's ImageLocality score plugin
// (pkg/scheduler/framework/plugins/imagelocality) as a wasm guest: it favours nodes that already
// have the pod's images, so that the pod starts without pulling them. Kept apart from package main
// so that go test runs it natively.
package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
)

// Name is the plugin's name in a KubeSchedulerConfiguration; distinct from the in-tree
// ImageLocality so that both can be configured.
const Name = "ImageLocalityWasm"

// MaxNodeScore is the framework's highest node score.
const MaxNodeScore int64 = 100

// The two thresholds bound the image score range: a reasonable size range for container images
// compressed and stored in registries (90%ile of images on dockerhub). The upper bound is per image.
const (
	mb                    int64 = 1024 * 1024
	minThreshold          int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

const preScoreStateKey = "PreScore" + Name

// ImageLocality scores a node by the sizes of the pod's images it already has, each scaled by the
// share of the cluster's nodes that have it (against the "node heating" problem).
type ImageLocality struct {
	// listNodes returns the snapshot's nodes; handle.NodeInfos().List in the guest.
	listNodes func() []api.NodeInfo
}

// New builds the plugin. It takes no configuration: guestConfig must be empty or "{}".
func New(config []byte) (*ImageLocality, error) {
	if c := bytes.TrimSpace(config); len(c) > 0 {
		var args struct{}
		dec := json.NewDecoder(bytes.NewReader(c))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return nil, fmt.Errorf("%s: guestConfig %q: %w (the plugin takes no configuration)", Name, config, err)
		}
	}
	return &ImageLocality{listNodes: handle.NodeInfos().List}, nil
}

// preScoreState is computed once per scheduling cycle, not per node.
type preScoreState struct {
	// images are the pod's normalized image names: init containers, containers, image volumes.
	images []string
	// totalNumNodes is the number of nodes in the snapshot (all of them, not only feasible ones).
	totalNumNodes int
}

// PreScore computes the pod's image names and the snapshot's node count for Score.
func (pl *ImageLocality) PreScore(state api.CycleState, podInfo api.PodInfo, _ []api.NodeInfo) *api.Status {
	total := len(pl.listNodes())
	if total == 0 {
		return api.NewStatus(api.Skip)
	}
	state.Write(preScoreStateKey, &preScoreState{images: podImages(podInfo.Pod()), totalNumNodes: total})
	return nil
}

// Score is calculatePriority(sumImageScores(...)) of kube-scheduler's ImageLocality.
func (pl *ImageLocality) Score(state api.CycleState, _ api.PodInfo, nodeInfo api.NodeInfo) (int64, *api.Status) {
	v, ok := state.Read(preScoreStateKey)
	if !ok {
		return 0, api.NewStatus(api.Error, fmt.Sprintf("reading %q from cycleState: not found", preScoreStateKey))
	}
	s := v.(*preScoreState)
	return calculatePriority(sumImageScores(nodeInfo.ImageStates(), s.images, s.totalNumNodes), len(s.images)), nil
}

// calculatePriority scales the sum of image scores, clamped to [minThreshold, maxThreshold], into
// [0, MaxNodeScore]; maxThreshold is maxContainerThreshold per image.
func calculatePriority(sumScores int64, numContainers int) int64 {
	maxThreshold := maxContainerThreshold * int64(numContainers)
	if sumScores < minThreshold {
		sumScores = minThreshold
	} else if sumScores > maxThreshold {
		sumScores = maxThreshold
	}
	return MaxNodeScore * (sumScores - minThreshold) / (maxThreshold - minThreshold)
}

// sumImageScores adds the scaled scores of the images already on the node.
func sumImageScores(imageStates map[string]api.ImageStateSummary, images []string, totalNumNodes int) int64 {
	var sum int64
	for _, name := range images {
		if state, ok := imageStates[name]; ok {
			sum += scaledImageScore(state, totalNumNodes)
		}
	}
	return sum
}

// scaledImageScore is the image's size scaled by the share of nodes that have it.
func scaledImageScore(state api.ImageStateSummary, totalNumNodes int) int64 {
	spread := float64(state.NumNodes) / float64(totalNumNodes)
	return int64(float64(state.Size) * spread)
}

// podImages lists the normalized images whose locality counts: init containers, containers, then
// image volumes (spec.volumes[].image.reference).
func podImages(pod *corev1.Pod) []string {
	if pod == nil {
		return nil
	}
	images := make([]string, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, c := range pod.Spec.InitContainers {
		images = append(images, normalizedImageName(c.Image))
	}
	for _, c := range pod.Spec.Containers {
		images = append(images, normalizedImageName(c.Image))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Image != nil {
			images = append(images, normalizedImageName(v.Image.Reference))
		}
	}
	return images
}

// normalizedImageName returns the CRI-compliant name: ":latest" is appended when the reference has
// neither a tag nor a digest.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}
