-- Tidings send (constant; nothing is ever spliced into it).
-- argv: target kind ("participant" or "chat"), address or chat GUID,
-- service ("iMessage" or "SMS"), message text, image path (may be empty).
-- Messages' send takes text or a file, never both, so an image is a second
-- send to the same target.
on run argv
	if (count of argv) is not 5 then error "tidings: expected 5 arguments" number 1
	set targetKind to item 1 of argv
	set targetID to item 2 of argv
	set serviceName to item 3 of argv
	set messageText to item 4 of argv
	set imagePath to item 5 of argv
	set imageFile to missing value
	if imagePath is not "" then set imageFile to POSIX file imagePath
	tell application "Messages"
		if targetKind is "chat" then
			set theTarget to chat id targetID
		else
			if serviceName is "SMS" then
				set theAccount to first account whose service type is SMS
			else
				set theAccount to first account whose service type is iMessage
			end if
			set theTarget to participant targetID of theAccount
		end if
		send messageText to theTarget
		if imageFile is not missing value then send imageFile to theTarget
	end tell
	return "ok"
end run
