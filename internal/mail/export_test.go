package mail

// Test helpers of this package for its external tests (package
// mail_test, which may import internal/mail/mailindex).
var (
	StartDovecotDir = startDovecotDir
	PolicyHome      = policyHome
)

const BlockedAddr = blockedAddr
