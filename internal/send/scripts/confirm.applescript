-- Tidings send confirmation (constant; nothing is ever spliced into it).
-- argv: name, address, service, path of a UTF-8 file holding the message
-- text, note (may be empty), timeout in seconds.
-- Prints "send", "cancel" or "timeout".
use AppleScript version "2.4"
use framework "Foundation"
use framework "AppKit"
use scripting additions

on run argv
	if (count of argv) is not 6 then return "error: expected 6 arguments"
	set theName to item 1 of argv
	set theAddress to item 2 of argv
	set theService to item 3 of argv
	set textPath to item 4 of argv
	set theNote to item 5 of argv
	set timeoutSeconds to (item 6 of argv) as integer
	set theText to current application's NSString's stringWithContentsOfFile:textPath encoding:(current application's NSUTF8StringEncoding) |error|:(missing value)
	if theText is missing value then return "error: cannot read the message text"
	if theName is "" then set theName to "(not in your contacts)"

	set theApp to current application's NSApplication's sharedApplication()
	theApp's setActivationPolicy:(current application's NSApplicationActivationPolicyAccessory)
	theApp's activateIgnoringOtherApps:true

	set theAlert to current application's NSAlert's alloc()'s init()
	theAlert's setAlertStyle:(current application's NSAlertStyleWarning)
	theAlert's setMessageText:"Send this message?"
	set info to "To: " & theName & linefeed & "Address: " & theAddress & linefeed & "Service: " & theService
	if theNote is not "" then set info to info & linefeed & linefeed & theNote
	set info to info & linefeed & linefeed & "An AI assistant asked to send the text below. Nothing is sent unless you click Send."
	theAlert's setInformativeText:info
	-- The first button is the default (Return); it is Cancel.
	set cancelButton to theAlert's addButtonWithTitle:"Cancel"
	set sendButton to theAlert's addButtonWithTitle:"Send"
	cancelButton's setKeyEquivalent:(character id 13)
	sendButton's setKeyEquivalent:""

	set scrollView to current application's NSScrollView's alloc()'s initWithFrame:{{0, 0}, {460, 220}}
	scrollView's setHasVerticalScroller:true
	scrollView's setBorderType:(current application's NSBezelBorder)
	set textView to current application's NSTextView's alloc()'s initWithFrame:{{0, 0}, {460, 220}}
	textView's setEditable:false
	textView's setSelectable:true
	textView's setRichText:false
	textView's setVerticallyResizable:true
	textView's setHorizontallyResizable:false
	textView's setAutoresizingMask:(current application's NSViewWidthSizable)
	textView's textContainer()'s setWidthTracksTextView:true
	textView's setString:theText
	scrollView's setDocumentView:textView
	theAlert's setAccessoryView:scrollView
	theAlert's layout()

	-- Waiting counts as cancelling: abort the modal session at the timeout.
	theApp's performSelector:"abortModal" withObject:(missing value) afterDelay:timeoutSeconds inModes:{current application's NSModalPanelRunLoopMode}
	set answer to theAlert's runModal()
	if answer = (current application's NSAlertSecondButtonReturn) then return "send"
	if answer = (current application's NSModalResponseAbort) then return "timeout"
	return "cancel"
end run
