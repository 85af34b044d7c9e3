package mcpserver

// Inventory returns every tool Tidings can offer, in the order tools/list
// shows them. Adding a tool: write its file (see status.go for the pattern),
// then add one line here. TestInventoryGuard and the schema snapshots under
// testdata/toolsnaps cover it automatically.
func Inventory() []Tool {
	return []Tool{
		getStatus,
		listConversations,
		getConversationMessages,
		searchMessages,
		reviewMessages,
		getResponseStats,
		lookupContacts,
		getContactDossier,
		getAttachment,
		saveAttachment,
		previewMessage,
		sendMessage,
	}
}
