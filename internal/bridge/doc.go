// Package bridge implements the iMessage helper bridge protocol 1.2 (seed
// 000) and Tidings' backward-compatible 1.3 extension: a file protocol
// between an unprivileged MCP server and a helper that holds Full Disk
// Access.
//
// A client publishes DIR/control/requests/request-<id>.json (temp file +
// rename); the worker ([Worker]) answers with
// DIR/control/responses/response-<id>.json (mode 0600, temp file + rename)
// and removes the request. The worker enforces the role table
// (IMESSAGE_BRIDGE_ROLE) before any database is opened, refuses unsafe
// runtime directories and request files, keeps a persistent record of
// request ids so an id is answered at most once in the folder's lifetime,
// and serializes workers with a lock file so two workers started by mistake
// never lose or double-answer a request.
//
// Versions: a request without "protocol_version" is a 1.2 request and is
// answered exactly as protocol 1.2 specifies (docs/bridge.md). A request
// carrying "protocol_version": "1.3" may use the extension actions (see
// [Extension]) and gets extra status fields and an "error_code" in errors.
// A request with another major version is refused.
//
// Data comes from a consumer-owned [Backend]; the worker itself never
// opens a message database. [Client] is the other side, used by
// `tidings bridge call` and `tidings serve --bridge`.
//
// See docs/bridge.md for the wire format, the rules and the installers.
package bridge
