package bridge

// StatusResult is the status action's answer (docs/bridge.md, "Actions and
// parameters", status): no
// message content and no database read, only versions, the role, roots,
// policy metadata and local boolean checks.
type StatusResult struct {
	HelperVersion   string   `json:"helper_version"`
	ProtocolVersion string   `json:"protocol_version"`
	BridgeRole      string   `json:"bridge_role"`
	AllowedActions  []string `json:"allowed_actions"`
	CodeRoot        string   `json:"code_root"`
	BridgeRoot      string   `json:"bridge_root"`
	// PythonVersion is always null: this helper is a Go program. The field
	// stays so a 1.2 client finds every field it expects.
	PythonVersion *string         `json:"python_version"`
	Policy        PolicyStatus    `json:"policy"`
	Checks        map[string]bool `json:"checks"`
}

// PolicyStatus is read-policy metadata: never an entry.
type PolicyStatus struct {
	// Mode is "blocklist" or "allowlist"; empty when the policy failed to
	// load (then Error says why, and every read fails closed).
	Mode           string `json:"mode"`
	Hardened       bool   `json:"hardened"`
	BlockedEntries int    `json:"blocked_entries"`
	AllowedEntries int    `json:"allowed_entries"`
	Fingerprint    string `json:"fingerprint,omitempty"`
	Error          string `json:"error,omitempty"`
}

// StatusDetails is what the helper adds to status: facts the worker cannot
// know itself. Producing them must not open a message database or read
// any content (a file-open probe for readability is fine).
type StatusDetails struct {
	Policy PolicyStatus
	// Checks are merged into status.checks: "database" (the messages
	// database is readable), "confirmation_helper" (a native confirmer is
	// available), …
	Checks map[string]bool
	// Extra fields are added for 1.3 requests only (index freshness,
	// sources, doctor checks).
	Extra map[string]any
}

// The worker's own checks in status.checks.
const (
	CheckRequestsDir  = "requests_dir"
	CheckResponsesDir = "responses_dir"
	CheckNoncesDir    = "nonces_dir"
	CheckLogFile      = "log_file"
	CheckDatabase     = "database"
	CheckConfirmation = "confirmation_helper"
)
