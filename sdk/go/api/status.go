package api

import "fmt"

// Code is a status code of the scheduling framework (docs/abi.md §6).
type Code int32

const (
	// Success means the plugin ran correctly and found the pod schedulable.
	Success Code = iota
	// Error is an internal plugin error; it aborts the scheduling cycle.
	Error
	// Unschedulable means the pod does not fit; preemption may help.
	Unschedulable
	// UnschedulableAndUnresolvable means the pod does not fit and preemption cannot help.
	UnschedulableAndUnresolvable
	// Wait is used by Permit to hold the pod.
	Wait
	// Skip skips this plugin for the pod (PreFilter, PreScore, Bind).
	Skip
	// Pending means the pod waits for something outside the scheduler.
	Pending
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip",
	"Pending"}

func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int32(c))
}

// Status is the result of a plugin call. A nil *Status is Success, as in kube-scheduler.
type Status struct {
	Code   Code
	Reason string
}

// NewStatus returns a status with the code and a reason joined from reasons.
func NewStatus(code Code, reasons ...string) *Status {
	s := &Status{Code: code}
	for i, r := range reasons {
		if i > 0 {
			s.Reason += ", "
		}
		s.Reason += r
	}
	return s
}

// AsStatus wraps err in an Error status; nil stays nil (Success).
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{Code: Error, Reason: err.Error()}
}

// GetCode returns the code; Success for a nil status.
func (s *Status) GetCode() Code {
	if s == nil {
		return Success
	}
	return s.Code
}

// Message returns the reason; "" for a nil status.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return s.Reason
}

// IsSuccess reports whether the status is nil or has code Success.
func (s *Status) IsSuccess() bool { return s.GetCode() == Success }

// IsSkip reports whether the status has code Skip.
func (s *Status) IsSkip() bool { return s.GetCode() == Skip }

func (s *Status) String() string {
	if s.Message() == "" {
		return s.GetCode().String()
	}
	return s.GetCode().String() + ": " + s.Message()
}
