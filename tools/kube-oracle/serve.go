package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// request is one line of `kube-oracle serve` input.
type request struct {
	ID      json.RawMessage   `json:"id"`
	Mode    string            `json:"mode"`
	Config  json.RawMessage   `json:"config"`
	Objects []json.RawMessage `json:"objects"`
	// Plugins, when given, are the only plugins the profiles keep (RestrictPlugins).
	Plugins []string `json:"plugins"`
}

type errorAnswer struct {
	ID    json.RawMessage `json:"id"`
	Error string          `json:"error"`
}

// maxRequestBytes bounds one request line (a case is a few hundred KB at most).
const maxRequestBytes = 64 << 20

// Serve answers each request line with exactly one line: the result document plus "id", or an error.
func Serve(in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 0, 1<<20), maxRequestBytes)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		answer := answer(line)
		if err := enc.Encode(answer); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return scanner.Err()
}

func answer(line []byte) (ans any) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return errorAnswer{ID: json.RawMessage("null"), Error: fmt.Sprintf("request is not a JSON object: %v", err)}
	}
	id := req.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	defer func() {
		if r := recover(); r != nil {
			ans = errorAnswer{ID: id, Error: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	if req.Mode != "cycle" && req.Mode != "run" {
		return errorAnswer{ID: id, Error: fmt.Sprintf("mode: %q is neither cycle nor run", req.Mode)}
	}
	c, err := DecodeCase(req.Objects, nil, req.Config)
	if err != nil {
		return errorAnswer{ID: id, Error: err.Error()}
	}
	RestrictPlugins(c.Config, req.Plugins)
	result, err := Evaluate(c, req.Mode)
	if err != nil {
		return errorAnswer{ID: id, Error: err.Error()}
	}
	result.ID = id
	return result
}

// setFeatureGates sets the gates the contract fixes to match wasmsched (docs/compatibility.md).
func setFeatureGates() error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		"SchedulerAsyncPreemption": false,
		"OpportunisticBatching":    false,
		"SchedulerPopFromBackoffQ": false,
	})
}
