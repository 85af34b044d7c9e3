-- Tidings: create one event in Calendar.app (constant; nothing is ever spliced into it).
-- argv: calendar name, title, start, end, all-day ("1" or "0"), location, notes.
-- start and end are "YEAR MONTH DAY SECONDS-OF-DAY" in this Mac's local time,
-- so no date text is parsed under the user's locale.
-- Prints the new event's uid.
on run argv
	if (count of argv) is not 7 then error "tidings: expected 7 arguments" number 1
	set calName to item 1 of argv
	set theTitle to item 2 of argv
	set startDate to my mkdate(item 3 of argv)
	set endDate to my mkdate(item 4 of argv)
	set isAllDay to (item 5 of argv is "1")
	set theLocation to item 6 of argv
	set theNotes to item 7 of argv
	tell application "Calendar"
		set found to (every calendar whose name is calName)
		if (count of found) is not 1 then error "tidings: no single calendar of that name" number 2
		tell item 1 of found
			set ev to make new event at end of events with properties {summary:theTitle, start date:startDate, end date:endDate, allday event:isAllDay, location:theLocation, description:theNotes}
		end tell
		return uid of ev
	end tell
end run

on mkdate(spec)
	set saved to AppleScript's text item delimiters
	set AppleScript's text item delimiters to " "
	set parts to text items of spec
	set AppleScript's text item delimiters to saved
	if (count of parts) is not 4 then error "tidings: bad date" number 3
	set d to current date
	-- day 1 first: moving 31 January to February would otherwise overflow into March
	set day of d to 1
	set year of d to (item 1 of parts) as integer
	set month of d to (item 2 of parts) as integer
	set day of d to (item 3 of parts) as integer
	set time of d to (item 4 of parts) as integer
	return d
end mkdate
