-- Tidings: change messages of one Mail.app account (constant; nothing is ever spliced into it).
-- argv: operation ("read", "flag" or "move"), the account's id (its folder name in
-- ~/Library/Mail/V*), the source mailbox's path, the target mailbox's path ("" unless
-- move), the value ("1" set, "0" clear; "" for move), then one or more message ids
-- (Mail's `id`, the Envelope Index ROWID). Every message is found before any is changed.
on run argv
	if (count of argv) < 6 then error "tidings: expected at least 6 arguments" number 1
	set op to item 1 of argv
	set acctID to item 2 of argv
	set srcPath to item 3 of argv
	set dstPath to item 4 of argv
	set val to ((item 5 of argv) is "1")
	tell application "Mail"
		set found to (every account whose id is acctID)
		if (count of found) is not 1 then error "tidings: no single account with that id" number 2
		set acct to item 1 of found
		set src to mailbox srcPath of acct
		if op is "move" then set dst to mailbox dstPath of acct
		set msgs to {}
		repeat with i from 6 to (count of argv)
			set n to (item i of argv) as integer
			set hits to (every message of src whose id is n)
			if (count of hits) is not 1 then error "tidings: no single message with that id" number 3
			set end of msgs to item 1 of hits
		end repeat
		repeat with m in msgs
			if op is "read" then
				set read status of m to val
			else if op is "flag" then
				set flagged status of m to val
			else if op is "move" then
				move m to dst
			else
				error "tidings: unknown operation" number 1
			end if
		end repeat
	end tell
	return "ok"
end run
