package redact

import (
	"strings"
	"testing"
)

// Per-rule tables in the style of gitleaks' utils.Validate and Presidio's
// parametrized recognizer tests: every true positive must be found with
// exactly the listed text and class by a redactor with only that class
// enabled, and no look-alike false positive may produce a finding of that
// class.

type tp struct {
	text  string
	want  []string // exact masked substrings, in order
	hints Hints
}

func only(class string) Config {
	var c Config
	if err := c.Set(class, true); err != nil {
		panic(err)
	}
	return c
}

func validate(t *testing.T, class string, tps []tp, fps []string) {
	t.Helper()
	r := New(only(class))
	for _, c := range tps {
		t.Run("tp/"+c.text, func(t *testing.T) {
			_, fs := r.Redact(c.text, c.hints)
			var got []string
			for _, f := range fs {
				if f.Class != class {
					t.Errorf("finding of class %q with only %q enabled", f.Class, class)
				}
				got = append(got, c.text[f.Start:f.End])
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("Redact(%q) masked %q, want %q", c.text, got, c.want)
			}
		})
	}
	for _, text := range fps {
		t.Run("fp/"+text, func(t *testing.T) {
			out, fs := r.Redact(text, Hints{})
			if len(fs) != 0 {
				t.Errorf("Redact(%q) = %q, want no %s finding", text, out, class)
			}
		})
	}
}

func TestRule2FA(t *testing.T) {
	validate(t, Class2FA, []tp{
		{text: "Your code is 482913", want: []string{"482913"}},
		{text: "G-482913 is your Google verification code.", want: []string{"482913"}},
		{text: "Your PIN is 4829", want: []string{"4829"}},
		{text: "new pin for the keypad: 5170", want: []string{"5170"}},
		{text: "PIN 1987", want: []string{"1987"}}, // tight binding accepts year-like PINs
		{text: "Gate code 1948# then buzz 12", want: []string{"1948"}},
		{text: "Gate code is #4821, parking in back", want: []string{"4821"}},
		{text: "Your WhatsApp code: 381-207", want: []string{"381-207"}},
		{text: "512 774 is your Instagram code.", want: []string{"512 774"}},
		{text: "Din engångskod är 8812 4401", want: []string{"8812 4401"}},
		{text: "Verification code: 9132-8845", want: []string{"9132-8845"}},
		{text: "OTP for your transaction of Rs 2,450.00 at FLIPKART is 648201. Valid 5 mins.", want: []string{"648201"}},
		{text: "Verification code:\n\n482019\n\nExpires in 10 minutes.", want: []string{"482019"}},
		{text: "Here is your login code — 771204", want: []string{"771204"}},
		{text: "Tu código de verificación es 482019.", want: []string{"482019"}},
		{text: "Ihr Bestätigungscode lautet 749201.", want: []string{"749201"}},
		{text: "Votre code de vérification est 571904.", want: []string{"571904"}},
		{text: "129033 est votre code de confirmation Facebook", want: []string{"129033"}},
		{text: "Ваш код подтверждения: 5592.", want: []string{"5592"}},
		{text: "【微信】验证码：839104，用于登录验证", want: []string{"839104"}},
		{text: "認証コード: 482231。", want: []string{"482231"}},
		{text: "Doğrulama kodunuz: 449201", want: []string{"449201"}},
		{text: "Ihre TAN lautet 849201 für die Überweisung", want: []string{"849201"}},
		{text: "Your Steam Guard code is R7K2P", want: []string{"R7K2P"}},
		{text: "Your login code for Slack is C4T-92K", want: []string{"C4T-92K"}},
		{text: "Telegram code: 64402\n\nLog in: https://t.me/login/64402", want: []string{"64402", "64402"}},
		{text: "Your code: 381-207. Or open v.whatsapp.com/381207", want: []string{"381-207", "381207"}},
		// Bare codes: shapes, hints, short-code senders.
		{text: "839201 to confirm", want: []string{"839201"}},
		{text: "Enter 412890 to verify your new device.", want: []string{"412890"}},
		{text: "Reply with 4410 to confirm your appointment.", want: []string{"4410"}},
		{text: "441902", want: []string{"441902"}, hints: Hints{OneTimeCodes: [][2]int{{0, 6}}}},
		{text: "Robinhood: 882011. Don't share.", want: []string{"882011"}, hints: Hints{OneTimeCodes: [][2]int{{11, 17}}}},
		{text: "503917", want: []string{"503917"}, hints: Hints{SenderShortCode: true}},
		{text: "FB-51742", want: []string{"51742"}, hints: Hints{SenderShortCode: true}},
		{text: "Rappi: 4412", want: []string{"4412"}, hints: Hints{SenderShortCode: true}},
		{text: "884210 - use this to finish setting up Authy", want: []string{"884210"}, hints: Hints{SenderShortCode: true}},
	}, []string{
		"what's the zip code there? 94110 or 94103?",
		"my zip code is 02139",
		"Area code 415 is SF",
		"Use promo code SAVE20 for 20% off!",
		"Promo code 2026 gets you free shipping",
		"Use code SAVE15 at checkout",
		"Tu código de descuento BLACK25 vence el 30/11",
		"Ton code promo est NOEL2026",
		"Der Rabattcode lautet WINTER20",
		"Ваш код скидки: SALE50",
		"Código postal 28013, Madrid",
		"The dress code is cocktail, party starts at 7",
		"Code review is at 3pm, PR #4821 needs two approvals",
		"They updated the code of conduct in 2024",
		"It took me 3 hours to write that code",
		"Error code 0x80070005 again",
		"Your code expires in 10 minutes",
		"Call me at 415-555-0132 when you get the code",
		"The verification process takes 3-5 business days",
		"Order 4821 is ready for pickup at counter 3",
		"the pin on the map is wrong, 2 blocks north",
		"I got 1234 likes on that post",
		"Meeting ID: 835 2201 9184 Passcode: cake",
	})
	t.Run("uber-opt-out-number", func(t *testing.T) {
		text := "Your Uber code: 4821. Never share this code. Reply STOP to 89203 to unsubscribe."
		_, fs := New(only(Class2FA)).Redact(text, Hints{})
		if len(fs) != 1 || text[fs[0].Start:fs[0].End] != "4821" {
			t.Errorf("findings %v, want only 4821", fs)
		}
	})
	// Short-code heuristic: the code must open the message as its own unit.
	sc := Hints{SenderShortCode: true}
	for _, text := range []string{
		"8821 Bank alert: Your available balance is $1,204.33",
		"Your order #58213 has shipped!",
		"CVS Pharmacy: Rx 8831204 is ready.",
		"2026 Holiday sale! 30% off everything.",
		"Walgreens: pickup at 2305 W Main.",
	} {
		if _, fs := New(only(Class2FA)).Redact(text, sc); len(fs) != 0 {
			t.Errorf("short-code Redact(%q) found %v", text, fs)
		}
	}
}

func TestRuleCard(t *testing.T) {
	validate(t, ClassCard, []tp{
		{text: "visa 4111111111111111", want: []string{"4111111111111111"}},
		{text: "use 4539 5260 1815 9083 exp 04/28", want: []string{"4539 5260 1815 9083"}},
		{text: "Card 5425-9139-0996-0304, CVV 381", want: []string{"5425-9139-0996-0304", "381"}},
		{text: "Pay with 4929.3231.9487.5742 please", want: []string{"4929.3231.9487.5742"}},
		{text: "amex 3714 199351 81902", want: []string{"3714 199351 81902"}},
		{text: "diners 30569309025904", want: []string{"30569309025904"}},
		{text: "mc 2223003122003222", want: []string{"2223003122003222"}},
		{text: "4242424242424242 12/28 123", want: []string{"4242424242424242"}},
		{text: "4111 1111 1111 1111 123 is the cvv", want: []string{"4111 1111 1111 1111"}},
		{text: "cvc: 0737", want: []string{"0737"}},
		{text: "4111 1111-1111 1111", want: []string{"4111 1111-1111 1111"}}, // mixed separators (docs/redaction.md, "Separators")
	}, []string{
		"Order number 4111 1111 1111 1112 is confirmed",     // fails Luhn
		"Confirmation number 4539876512340987",              // fails Luhn
		"I typed 4111 1111 1111 1112 by mistake",            // fails Luhn, no label
		"is it 5425913909960305 or something else",          // fails Luhn, no label
		"ref 1234567890123 for your claim",                  // issuer prefix 1
		"My IMEI is 353918101234567",                        // labelled IMEI
		"Order 4111111111111111 shipped",                    // labelled order
		"USPS tracking 9400 1111 0200 0880 1234 56",         // issuer prefix 9
		"FedEx tracking number 7946 1234 5678",              // too short
		"Tracking: 1Z999AA10123456784",                      // letters
		"Call (415) 555-0132 or +1 415 555 0199",            // phone numbers
		"The total population is 8,336,817",                 // grouped amount
		"41 1111 1111 1111 11",                              // first group too short
		"$4,111,111,111,111,111.00",                         // money
		"ISBN 978-0-306-40615-7",                            // ISBN
		"Invoice 2026-11-30-00481 total $1,284.00",          // date-like id
		"the card ending in 9083 was charged $14.99",        // last four
		"UUID 123e4567-e89b-12d3-a456-426614174000 is fine", // hex
	})
}

func TestRuleSSN(t *testing.T) {
	validate(t, ClassSSN, []tp{
		{text: "my ssn is 536-22-1847", want: []string{"536-22-1847"}},
		{text: "SSN: 417 92 5038", want: []string{"417 92 5038"}},
		{text: "Social security number 238/41/9952", want: []string{"238/41/9952"}},
		{text: "SS# 321.54.9870", want: []string{"321.54.9870"}},
		{text: "My SSN is 602381947", want: []string{"602381947"}},
		{text: "her social is 482-10-3391, DOB 3/14/1952", want: []string{"482-10-3391"}},
	}, []string{
		"Is 123-45-6789 a real SSN?",      // known example number
		"000-12-3456",                     // area 000
		"666-12-3456",                     // area 666
		"912-44-1820",                     // area 9xx (ITIN range)
		"536-00-1847",                     // group 00
		"536-22-0000",                     // serial 0000
		"111-11-1111",                     // one repeated digit
		"078-05-1120",                     // Woolworth wallet card
		"219-09-9999",                     // advertising number
		"987-65-4321",                     // advertising range
		"693-09.4444",                     // mixed delimiters (Presidio)
		"602381947",                       // contiguous without a label
		"Part no. 331-45-98765",           // 3-2-5
		"Case number 2026/11/30412",       // 4-2-5
		"Tax ID (EIN) 12-3456789",         // EIN shape
		"call 1-536-22-1847-9",            // inside a longer number
		"Ticket 536-22-1847 reopened",     // labelled as a ticket
		"SSN on file ends in 1847",        // last four
		"Meeting at 10:30, room 536 22 1", // short groups
	})
}

func TestRuleBank(t *testing.T) {
	validate(t, ClassBank, []tp{
		{text: "Routing 021000021 account 483920174455", want: []string{"021000021", "483920174455"}},
		{text: "checking acct # 0004829103, routing number 026009593", want: []string{"0004829103", "026009593"}},
		{text: "account number: 7723 0041 9982", want: []string{"7723 0041 9982"}},
		{text: "ABA 121000248, acct 88120349", want: []string{"121000248", "88120349"}},
		{text: "routing and account numbers are 322271627 and 1209384756", want: []string{"322271627", "1209384756"}},
		{text: "Número de cuenta: 0049 1500 2011 2345", want: []string{"0049 1500 2011 2345"}},
		{text: "Kontonummer 532013000 bei der Sparkasse", want: []string{"532013000"}},
		{text: "The account # on the bill is 4410-2291-0037, pay online", want: []string{"4410-2291-0037"}},
		{text: "routing number 123456789", want: []string{"123456789"}}, // tight label: no checksum needed
	}, []string{
		"Your account ending in 4821 has a new statement.",
		"Your Netflix account was updated. If this wasn't you call 1-866-579-7172.",
		"Account manager is Dana, her cell is 617-555-0199",
		"Your account balance is $3,482.19 as of 11/29",
		"Account 2 of 3 verified",
		"routing to gate 14 for the delayed flight",
		"Acct ending x7721 payment of $120.00 received 11/27",
		"I opened a savings account with 500 bucks",
		"near the routing desk, call 123456789",   // loose: checksum fails
		"Your account 7845 has been credited",     // too short
		"account at +44 20 7946 0958 for support", // phone
	})
}

func TestRuleIBAN(t *testing.T) {
	validate(t, ClassIBAN, []tp{
		{text: "IBAN: DE89 3704 0044 0532 0130 00 (Sparkasse)", want: []string{"DE89 3704 0044 0532 0130 00"}},
		{text: "to GB82WEST12345698765432 ref X", want: []string{"GB82WEST12345698765432"}},
		{text: "FR14 2004 1010 0505 0001 3M02 606", want: []string{"FR14 2004 1010 0505 0001 3M02 606"}},
		{text: "CH93 0076 2011 6238 5295 7 is Swiss", want: []string{"CH93 0076 2011 6238 5295 7"}},
		{text: "lower case de89370400440532013000 works", want: []string{"de89370400440532013000"}},
		{text: "NO9386011117947.", want: []string{"NO9386011117947"}},
		{text: "MT84MALT011000012345MTLCAST001S", want: []string{"MT84MALT011000012345MTLCAST001S"}},
	}, []string{
		"IBAN DE89 3704 0044 0532 0130 01", // checksum fails
		"GB00 XXXX 0000 0000 0000 00",      // checksum fails
		"DE12 is the code for the Berlin office",
		"DE89370400440532013000X",  // too long / glued
		"XX89370400440532013000",   // unknown country
		"DE89 3704 0044 0532 0130", // too short
	})
	// A valid IBAN is found even when words follow it.
	validate(t, ClassIBAN, []tp{{text: "Konto: AT611904300234573201 danke", want: []string{"AT611904300234573201"}}}, nil)
}

func TestRuleAddress(t *testing.T) {
	validate(t, ClassAddress, []tp{
		{text: "I'm at 1423 Maple Ave, Apt 3B, buzz 3B", want: []string{"1423 Maple Ave, Apt 3B"}},
		{text: "Ship to 742 Evergreen Terrace, Springfield, OR 97477 please", want: []string{"742 Evergreen Terrace, Springfield, OR 97477"}},
		{text: "Party is at 215 W 84th St! Bring a bottle", want: []string{"215 W 84th St"}},
		{text: "we moved! 3901 Lakeshore Blvd Apt 1205, Chicago, IL 60613", want: []string{"3901 Lakeshore Blvd Apt 1205, Chicago, IL 60613"}},
		{text: "Mail goes to 9 Harbor Way #2, not the old place", want: []string{"9 Harbor Way #2"}},
		{text: "address is 2200 Pennsylvania Ave NW, Washington, DC 20037 fyi", want: []string{"2200 Pennsylvania Ave NW, Washington, DC 20037"}},
		{text: "check to PO Box 4421, Portland, ME 04112", want: []string{"PO Box 4421, Portland, ME 04112"}},
		{text: "I need to be at 100 Main St. by 3", want: []string{"100 Main St"}},
		{text: "i'm at 12 main st", want: []string{"12 main st"}},
	}, []string{
		"I'll be there in 5 min",
		"I ran 3 miles on the trail this morning",
		"we drove 2 hours down the highway",
		"Take the 2nd exit off the roundabout then left on Elm",
		"There are 4 lanes closed on 101 right now",
		"I have 3 kids and 2 dogs",
		"Turn right on Main St after the 2nd light",
		"Exit 12 on the highway, then follow signs",
		"St. Louis has 300 days of sun? doubt it",
		"Dr. Kim moved my appointment to 3:45",
		"The 5 way intersection is a nightmare",
		"We're in Springfield, IL 62704 for the holidays",
		"Route 66 road trip in June??",
		"See you at 6 at the Starbucks on 5th Ave",
		"It costs $40 Main St prices lol",
		"we live at 45 oak lane", // lower-case name before an everyday-word suffix: not confident enough
	})
}

func TestRuleDOB(t *testing.T) {
	validate(t, ClassDOB, []tp{
		{text: "DOB: 04/17/1986", want: []string{"04/17/1986"}},
		{text: "date of birth 1990-02-28, member ID W23918841", want: []string{"1990-02-28"}},
		{text: "He was born on June 3, 1978 in Ohio", want: []string{"June 3, 1978"}},
		{text: "my birthday is March 5, not the 15th", want: []string{"March 5"}},
		{text: "his birthday's March 3rd", want: []string{"March 3rd"}},
		{text: "d.o.b. 12.09.1994", want: []string{"12.09.1994"}},
		{text: "born on the 4th of July 1999", want: []string{"4th of July 1999"}},
		{text: "Fecha de nacimiento: 14/08/1989", want: []string{"14/08/1989"}},
		{text: "Mein Geburtsdatum ist der 12.03.1987", want: []string{"12.03.1987"}},
		{text: "Born: 03/15/1992", want: []string{"03/15/1992"}},
	}, []string{
		"Happy birthday!! Dinner on 12/14 at 7?",
		"I was born in 1986, so I'm 40 now",
		"Her birthday party is Saturday the 6th at 2pm",
		"The due date is 01/15/2027",
		"The concert was on June 3, 1978 according to the poster",
		"DOB 1985 is all I remember",
		"His birthday is on the 22nd",
	})
}

func TestRuleAPIKey(t *testing.T) {
	// Tokens are assembled at run time so this file holds no literal that
	// secret scanners would flag.
	j := func(parts ...string) string { return strings.Join(parts, "") }
	ghp := j("ghp_", "DPrAJ71fTquWoGsbeKXgzg2sye9b2Rann76d")
	aws := j("AKIA", "454ML6LG4TJFCZ4K")
	stripe := j("sk_", "live_", "KbPizDmbX1rpXjYdOhCgOIPO")
	slack := j("xoxb-", "899143301467-3002458921527-vQUSHL8iLc7bE6wSt9cbMOeE")
	gcp := j("AIza", "GJR1m4jfXuX8v-h2-1KZNUK9IKLdbFfu0Xg")
	openai := j("sk-", "iUfqygB18AIYTimzORZb", "T3BlbkFJ", "gmKRw609xhTGOWvGR1mZ")
	anthropic := j("sk-ant-api03-", "j9nde9syxoAwuKmhr7jmPY72T3AVbfzx06UVZyvmbPkZyRHJouZrQV3xZAxjRM8mbTgDIMRBZxjX-BpYconEG4ZgzWbmH", "AA")
	jwt := j("eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9", ".", "eyJzdWIiOiAiMTIzNDU2Nzg5MCJ9", ".", "Fp5FYg8nENYEiV1vC1pjmqp6aLFMdPwi45YsTDfNd6O")
	pem := j("-----BEGIN ", "OPENSSH PRIVATE KEY-----\n", strings.Repeat("hxiUP9eLwvo3E4GEH+C/Hezg5xPtc/34", 3), "\n-----END OPENSSH PRIVATE KEY-----")
	pemCut := j("-----BEGIN ", "RSA PRIVATE KEY-----\n", strings.Repeat("MIIEpAIBAAKCAQEA7bq98NkT3r8xP2fQ", 3))
	tg := j("7308687245", ":AA", "NZjN7iUjrnY7p4bW8ELo6bAtLWMRYlGyz")
	validate(t, ClassAPIKey, []tp{
		{text: "new token: " + ghp, want: []string{ghp}},
		{text: "key " + aws + " / secret in 1password", want: []string{aws}},
		{text: "use this for prod " + stripe + " don't commit it!!", want: []string{stripe}},
		{text: "bot token is " + slack, want: []string{slack}},
		{text: "maps key " + gcp + ".", want: []string{gcp}},
		{text: "old openai key " + openai + " still works?", want: []string{openai}},
		{text: "claude key: " + anthropic, want: []string{anthropic}},
		{text: "Authorization: Bearer " + jwt, want: []string{jwt}},
		{text: pem, want: []string{pem}},
		{text: "partial paste " + pemCut, want: []string{pemCut}},
		{text: "telegram bot: " + tg, want: []string{tg}},
		{text: "api_key: 9af4f66916abf05676139a8d4aed2579", want: []string{"9af4f66916abf05676139a8d4aed2579"}},
		{text: "aws_secret_access_key = pzIxELIVoDMxCJql7j4jfaKG2lvKyFwJdxte7Xa+", want: []string{"pzIxELIVoDMxCJql7j4jfaKG2lvKyFwJdxte7Xa+"}},
		{text: "the db password=Xk29fLq0Vb7mZt.", want: []string{"Xk29fLq0Vb7mZt"}},
		{text: `wifi "Casa", password: Tr4mpoline!Sky42`, want: []string{"Tr4mpoline!Sky42"}},
	}, []string{
		"The key to success is consistency",
		"the api is down again",
		"I lost my house key",
		"The example key in the AWS docs is " + j("AKIA", "IOSFODNN7", "EXAMPLE"),
		"API_KEY=your_api_key_here in the template",
		"Authorization: Basic realm",
		"ghp_ is the prefix for classic tokens",
		"sk-ant is the prefix for anthropic keys",
		"I installed sklearn and sk-video",
		"https://github.com/golang/go/blob/master/README.md",
		"https://www.nytimes.com/2026/11/28/us/politics/budget-deal.html",
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
		"UUID 123e4567-e89b-12d3-a456-426614174000",
		"eyJub3QiOiJhIGpzb24ifQ.eyJzdWIiOiIxMjM0NTY3ODkwIn0 is half a token",
		j("ey", "notbase64json1234567.eyJzdWIiOiAiMTIzNDU2Nzg5MCJ9.Fp5FYg8nENYEiV1vC1pjm"),
		"the password is on the fridge",
		"password: hunter",
		"access code: 48291037", // digits only: a 2fa matter, not a key
	})
}

// TestNeverMasked is the shared list of everyday values no rule may touch.
func TestNeverMasked(t *testing.T) {
	r := Default()
	for _, text := range []string{
		"Call me at (415) 555-0132",
		"My new number is +44 20 7946 0958",
		"+1-415-555-0132", "415.555.0132", "+33 6 12 34 56 78", "+49 151 23456789", "+86 138 0013 8000",
		"+81 90-1234-5678", "Landline is 020 7946 0018, cell 07700 900461", "1-800-FLOWERS",
		"It's $40 for the tickets", "That jacket was €129.95", "Rent is $2,350", "I owe you 12.50", "J'ai payé 45,90 €",
		"Order #112-7834521-9928374 shipped", "Order number 4111 1111 1111 1112 is confirmed",
		"Appointment on 12/03/2026 at 10:40", "Meeting moved to 2026-12-02 at 14:00", "2026-11-30T14:02:11Z build finished",
		"Tracking: 1Z999AA10123456784", "USPS 9400111202555842761094 delivered", "FedEx 7946 1234 5678 out for delivery",
		"Flight AA 2231 lands at 4:05pm", "BA0117 delayed by 40 mins", "UA 1549 landing 10:35pm at LGA",
		"We're in Springfield, IL 62704", "my zip is 94110",
		"We got married in 2011", "Class of 2008 reunion",
		"I have 3 kids", "Lost 12 lbs since September", "It's 72°F here", "Battery at 14%",
		"Updated to iOS 18.2.1", "running go1.26.8", "node v20.11.0 or 22.3.0?",
		"Check https://www.nytimes.com/2026/11/28/us/politics/budget-deal.html",
		"https://www.amazon.com/dp/B0CHX1W1XY?ref=ppx_yo2ov_dt_b_fed_asin_title",
		"Latitude 37.7749, longitude -122.4194", "ISBN 978-0-306-40615-7", "Score was 104-98",
	} {
		if out, fs := r.Redact(text, Hints{}); len(fs) != 0 {
			t.Errorf("Redact(%q) = %q, want unchanged", text, out)
		}
	}
}
