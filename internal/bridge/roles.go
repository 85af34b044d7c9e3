package bridge

import (
	"fmt"
	"slices"
)

// RoleEnv is the environment variable the worker reads its role from.
const RoleEnv = "IMESSAGE_BRIDGE_ROLE"

// Role is a bridge role (docs/bridge.md, "Roles").
type Role string

// Roles. RoleInvalid is what an unknown IMESSAGE_BRIDGE_ROLE value becomes:
// no action is served.
const (
	RoleHost    Role = "host"
	RoleManager Role = "manager"
	RoleInvalid Role = "invalid"
)

// ParseRole reads IMESSAGE_BRIDGE_ROLE's value: unset or empty means host
// (the installers set nothing), "host" and "manager" are themselves, and
// anything else — other spellings included — is an error: the worker then
// fails closed and serves no action.
func ParseRole(value string) (Role, error) {
	switch value {
	case "", string(RoleHost):
		return RoleHost, nil
	case string(RoleManager):
		return RoleManager, nil
	}
	return RoleInvalid, fmt.Errorf("%s=%s is not a bridge role (want host or manager); failing closed: no action is served", RoleEnv, excerpt(value))
}

// actionSpec is one row of the role table.
type actionSpec struct {
	host, manager bool
	// bodies marks actions that return message bodies; a manager bridge
	// never serves one.
	bodies bool
}

// roleTable is protocol 1.2's role table (docs/bridge.md, "Roles"), verbatim.
var roleTable = map[string]actionSpec{
	ActionStatus:         {host: true, manager: true},
	ActionReview:         {host: true, bodies: true},
	ActionSearch:         {host: true, bodies: true},
	ActionChatHistory:    {host: true, bodies: true},
	ActionResponseStats:  {host: true},
	ActionContactsLookup: {host: true, manager: true},
	ActionSendPreview:    {host: true, bodies: true}, // "draft only"
	ActionSend:           {host: true, bodies: true},
	ActionListChats:      {manager: true},
}

func (s actionSpec) allows(r Role) bool {
	switch r {
	case RoleHost:
		return s.host
	case RoleManager:
		return s.manager && !s.bodies
	}
	return false
}

// AllowedActions returns the sorted actions role may use under protocol
// version v ("1.2" or "1.3"), given the worker's extensions. An invalid
// role has none.
func AllowedActions(r Role, v string, exts []Extension) []string {
	out := []string{}
	for name, spec := range roleTable {
		if spec.allows(r) {
			out = append(out, name)
		}
	}
	if v == Version13 {
		for _, e := range exts {
			if e.spec().allows(r) {
				out = append(out, e.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}
