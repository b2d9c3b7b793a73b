// Package klog logs through the host's klog, honouring the plugin's logSeverity: messages below it
// are dropped in the guest, before they are formatted.
package klog

import (
	"fmt"
	"strconv"

	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
)

// Severities of docs/abi.md §11.
const (
	severityInfo int32 = iota
	severityWarning
	severityError
)

var threshold = struct {
	v    int32
	done bool
}{}

// enabled compares with the host's logSeverity, asked once in a guest.
func enabled(sev int32) bool {
	if !threshold.done {
		threshold.v, threshold.done = imports.Severity(), cacheSeverity
	}
	return sev >= threshold.v
}

// Info logs its arguments, formatted as fmt.Sprint does, at info.
func Info(args ...any) { logf(severityInfo, fmt.Sprint, args...) }

// Warning logs at warning.
func Warning(args ...any) { logf(severityWarning, fmt.Sprint, args...) }

// Error logs at error.
func Error(args ...any) { logf(severityError, fmt.Sprint, args...) }

// Infof logs a formatted message at info.
func Infof(format string, args ...any) {
	if enabled(severityInfo) {
		imports.Log(severityInfo, fmt.Sprintf(format, args...))
	}
}

// InfoS logs a structured message: key/value pairs after the message, as klog.InfoS.
func InfoS(msg string, keysAndValues ...any) { logs(severityInfo, msg, keysAndValues) }

// ErrorS logs a structured error message; err goes first as the "err" pair, as klog.ErrorS.
func ErrorS(err error, msg string, keysAndValues ...any) {
	if err != nil {
		keysAndValues = append([]any{"err", err}, keysAndValues...)
	}
	logs(severityError, msg, keysAndValues)
}

func logf(sev int32, format func(...any) string, args ...any) {
	if enabled(sev) {
		imports.Log(sev, format(args...))
	}
}

// kvBuf is reused from line to line: the host has read it when imports.Logs returns.
var kvBuf []byte

// logs sends the pairs as a NUL list, keeping empty values so that pairs stay aligned.
func logs(sev int32, msg string, kvs []any) {
	if !enabled(sev) {
		return
	}
	buf := kvBuf[:0]
	for _, kv := range kvs {
		buf = append(appendValue(buf, kv), 0)
	}
	kvBuf = buf
	imports.Logs(sev, msg, buf)
}

// appendValue appends v as fmt.Append does. Strings, integers and booleans, the usual values of a
// plugin's lines, skip fmt's reflection, which in a wasm guest costs more than the rest of the line;
// named types (which may have a String method) and everything else go through fmt.
func appendValue(buf []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return append(buf, x...)
	case int:
		return strconv.AppendInt(buf, int64(x), 10)
	case int64:
		return strconv.AppendInt(buf, x, 10)
	case int32:
		return strconv.AppendInt(buf, int64(x), 10)
	case uint8:
		return strconv.AppendUint(buf, uint64(x), 10)
	case uint:
		return strconv.AppendUint(buf, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(buf, x, 10)
	case uint32:
		return strconv.AppendUint(buf, uint64(x), 10)
	case bool:
		return strconv.AppendBool(buf, x)
	}
	return fmt.Append(buf, v)
}
