//go:build !wasip1

package klog

// Native tests swap fake hosts with different severities: ask every time.
const cacheSeverity = false
