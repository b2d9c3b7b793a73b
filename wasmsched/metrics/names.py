"""Label values and constants of kube-scheduler's metrics (metrics.go, profile_metrics.go, schedule_one.go),
apart from prometheus_client so that the scheduler can name them without importing it."""

SCHEDULER_SUBSYSTEM = "scheduler"

# kube samples plugin execution durations on this percentage of scheduling cycles (schedule_one.go).
PLUGIN_METRICS_SAMPLE_PERCENT = 10
# wasmsched's own: the share of guest calls whose duration is observed (a call costs microseconds).
GUEST_CALL_SAMPLE_PERCENT = 10

# The extension_point label values (metrics.go).
PRE_FILTER = "PreFilter"
FILTER = "Filter"
PRE_FILTER_EXTENSION_ADD_POD = "PreFilterExtensionAddPod"
PRE_FILTER_EXTENSION_REMOVE_POD = "PreFilterExtensionRemovePod"
POST_FILTER = "PostFilter"
PRE_SCORE = "PreScore"
SCORE = "Score"
SCORE_EXTENSION_NORMALIZE = "ScoreExtensionNormalize"
PRE_BIND = "PreBind"
BIND = "Bind"
POST_BIND = "PostBind"
RESERVE = "Reserve"
UNRESERVE = "Unreserve"
PERMIT = "Permit"

# The result label values of schedule_attempts_total (profile_metrics.go).
SCHEDULED_RESULT = "scheduled"
UNSCHEDULABLE_RESULT = "unschedulable"
ERROR_RESULT = "error"

# The queue label values of queue_incoming_pods_total, and kube's event labels that are not cluster events.
ACTIVE_Q = "active"
BACKOFF_Q = "backoff"
UNSCHEDULABLE_Q = "unschedulable"
EVENT_UNSCHEDULED_POD_ADD = "UnscheduledPodAdd"
EVENT_UNSCHEDULED_POD_UPDATE = "UnscheduledPodUpdate"
EVENT_SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
EVENT_BACKOFF_COMPLETE = "BackoffComplete"
EVENT_FORCE_ACTIVATE = "ForceActivate"
EVENT_UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

# The attempts label of pod_scheduling_sli_duration_seconds is capped, as kube's getAttemptsLabel.
MAX_ATTEMPTS_LABEL = 15
