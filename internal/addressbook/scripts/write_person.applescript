-- Tidings: write one person in Contacts.app (constant; nothing is ever spliced into it).
-- argv: operation ("create", "update" or "delete"), the person's id ("" for create);
-- create and update go on with first, middle and last name, nickname, organization,
-- note, the number of phones, a label and a value per phone, the number of e-mail
-- addresses, a label and a value per address. Phones and addresses replace the
-- person's. Prints the person's id.
on run argv
	if (count of argv) < 2 then error "tidings: expected an operation and an id" number 1
	set op to item 1 of argv
	tell application "Contacts"
		if op is "delete" then
			if (count of argv) is not 2 then error "tidings: expected 2 arguments" number 1
			set found to (every person whose id is (item 2 of argv))
			if (count of found) is not 1 then error "tidings: no single person with that id" number 2
			set pid to id of item 1 of found
			delete item 1 of found
			save
			return pid
		end if
		if (count of argv) < 10 then error "tidings: expected at least 10 arguments" number 1
		if op is "create" then
			set p to make new person with properties {first name:(item 3 of argv)}
		else if op is "update" then
			set found to (every person whose id is (item 2 of argv))
			if (count of found) is not 1 then error "tidings: no single person with that id" number 2
			set p to item 1 of found
		else
			error "tidings: unknown operation" number 1
		end if
		set first name of p to (item 3 of argv)
		set middle name of p to (item 4 of argv)
		set last name of p to (item 5 of argv)
		set nickname of p to (item 6 of argv)
		set organization of p to (item 7 of argv)
		set note of p to (item 8 of argv)
		delete every phone of p
		set n to (item 9 of argv) as integer
		set i to 10
		repeat n times
			make new phone at end of phones of p with properties {label:(item i of argv), value:(item (i + 1) of argv)}
			set i to i + 2
		end repeat
		delete every email of p
		set n to (item i of argv) as integer
		set i to i + 1
		repeat n times
			make new email at end of emails of p with properties {label:(item i of argv), value:(item (i + 1) of argv)}
			set i to i + 2
		end repeat
		save
		return id of p
	end tell
end run
