//go:build wasip1

package klog

// The host's logSeverity is fixed for the plugin's life: ask once.
const cacheSeverity = true
