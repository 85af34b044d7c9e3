package demo

import (
	"fmt"
	"strings"
)

// Owner is the person whose Messages database the demo is. Their own
// handles appear as the account and destination_caller_id of every row.
var Owner = Person{Key: "me", First: "Alex", Last: "Morgan", Phone: "+14155550100", Email: "alex.morgan@icloud.example"}

// Person is someone in the demo data: a contact (with a vCard in
// contacts.vcf) or an automated sender (a short code, no card).
type Person struct {
	// Key identifies the person in Stories ("sam", "mom").
	Key   string
	First string
	Last  string
	// Nickname is the vCard NICKNAME ("Mom").
	Nickname string
	Org      string
	// Phone is the E.164 handle Messages stores ("+14155550134"), or a
	// short code ("32665"). Empty for email-only people.
	Phone string
	// PhoneAsTyped is how the number is written on the card.
	PhoneAsTyped string
	Email        string
	// Service is the 1:1 service: "iMessage" or "SMS".
	Service string
	// Role groups people for conversation templates: "friend", "family",
	// "work", "acquaintance", "service" (businesses), "automated".
	Role string
	// Weight is the relative activity of the 1:1 thread in filler.
	Weight int
	// ViaEmail makes the 1:1 iMessage thread use the email handle.
	ViaEmail bool
	// NoCard leaves the person out of contacts.vcf (unknown numbers).
	NoCard bool
}

// Name is the display name: nickname for family cards, else first + last,
// else the organisation.
func (p Person) Name() string {
	if p.First == "" && p.Last == "" {
		return p.Org
	}
	return strings.TrimSpace(p.First + " " + p.Last)
}

// Handle is the handle the 1:1 thread uses.
func (p Person) Handle() string {
	if p.ViaEmail || p.Phone == "" {
		return p.Email
	}
	return p.Phone
}

// people are the storyline characters first (fixed keys), then the filler
// cast. Phone numbers are in ranges reserved for fiction: NANP 555-01xx,
// France +33 6 39 98, Germany +49 30 23125.
var people = []Person{
	{Key: "sam", First: "Sam", Last: "Rivera", Phone: "+14155550134", PhoneAsTyped: "(415) 555-0134", Email: "sam.rivera@mail.example", Service: "iMessage", Role: "friend", Weight: 40},
	{Key: "jordan", First: "Jordan", Last: "Kim", Phone: "+14155550147", PhoneAsTyped: "415-555-0147", Service: "iMessage", Role: "friend", Weight: 35},
	{Key: "maya", First: "Maya", Last: "Chen", Phone: "+14155550152", PhoneAsTyped: "+1 415 555 0152", Email: "maya.chen@mail.example", Service: "iMessage", Role: "friend", Weight: 30},
	{Key: "lea", First: "Léa", Last: "Martin", Phone: "+33639981234", PhoneAsTyped: "+33 6 39 98 12 34", Service: "iMessage", Role: "friend", Weight: 8},
	{Key: "lukas", First: "Lukas", Last: "Becker", Phone: "+493023125467", PhoneAsTyped: "+49 30 23125467", Service: "iMessage", Role: "friend", Weight: 6},
	{Key: "mom", First: "Linda", Last: "Morgan", Nickname: "Mom", Phone: "+16175550192", PhoneAsTyped: "(617) 555-0192", Service: "iMessage", Role: "family", Weight: 45},
	{Key: "dad", First: "Robert", Last: "Morgan", Nickname: "Dad", Phone: "+16175550193", PhoneAsTyped: "(617) 555-0193", Service: "iMessage", Role: "family", Weight: 15},
	{Key: "emma", First: "Emma", Last: "Morgan", Phone: "+16175550118", PhoneAsTyped: "617.555.0118", Service: "iMessage", Role: "family", Weight: 25},
	{Key: "marcus", First: "Marcus", Last: "Webb", Org: "Webb Properties", Phone: "+14155550171", PhoneAsTyped: "(415) 555-0171", Service: "SMS", Role: "service", Weight: 3},
	{Key: "priya", First: "Priya", Last: "Shah", Org: "Northwind", Phone: "+14155550163", PhoneAsTyped: "415 555 0163", Email: "priya.shah@northwind.example", Service: "iMessage", Role: "work", Weight: 20, ViaEmail: true},
	{Key: "dentist", Org: "Bright Smile Dental", Phone: "+14155550109", PhoneAsTyped: "(415) 555-0109", Service: "SMS", Role: "service", Weight: 1},

	{Key: "acme", Org: "Acme", Phone: "32665", Service: "SMS", Role: "automated", Weight: 6, NoCard: true},
	{Key: "bank", Org: "Northbank", Phone: "72975", Service: "SMS", Role: "automated", Weight: 8, NoCard: true},
	{Key: "parcel", Org: "ParcelPoint", Phone: "88202", Service: "SMS", Role: "automated", Weight: 4, NoCard: true},
	{Key: "freshbowl", Org: "FreshBowl", Phone: "22395", Service: "SMS", Role: "automated", Weight: 2, NoCard: true},
	{Key: "pharmacy", Org: "CarePlus Pharmacy", Phone: "96411", Service: "SMS", Role: "automated", Weight: 1, NoCard: true},

	{Key: "nina", First: "Nina", Last: "Alvarez", Phone: "+14155550121", PhoneAsTyped: "(415) 555-0121", Service: "iMessage", Role: "friend", Weight: 22},
	{Key: "omar", First: "Omar", Last: "Haddad", Phone: "+15105550144", PhoneAsTyped: "510-555-0144", Service: "iMessage", Role: "friend", Weight: 18},
	{Key: "chloe", First: "Chloe", Last: "Nguyen", Phone: "+14155550186", PhoneAsTyped: "(415) 555-0186", Service: "iMessage", Role: "friend", Weight: 16},
	{Key: "ethan", First: "Ethan", Last: "Brooks", Phone: "+16505550129", PhoneAsTyped: "650-555-0129", Service: "SMS", Role: "friend", Weight: 10},
	{Key: "ava", First: "Ava", Last: "Schultz", Phone: "+14155550138", PhoneAsTyped: "(415) 555-0138", Service: "iMessage", Role: "friend", Weight: 12},
	{Key: "noah", First: "Noah", Last: "Fischer", Phone: "+15105550157", PhoneAsTyped: "(510) 555-0157", Service: "iMessage", Role: "friend", Weight: 9},
	{Key: "zoe", First: "Zoe", Last: "Okafor", Phone: "+14155550175", PhoneAsTyped: "415-555-0175", Service: "iMessage", Role: "friend", Weight: 14},
	{Key: "theo", First: "Theo", Last: "Laurent", Phone: "+14155550183", PhoneAsTyped: "(415) 555-0183", Service: "iMessage", Role: "friend", Weight: 7},
	{Key: "ruby", First: "Ruby", Last: "Castillo", Phone: "+16505550112", PhoneAsTyped: "(650) 555-0112", Service: "iMessage", Role: "friend", Weight: 8},
	{Key: "kai", First: "Kai", Last: "Tanaka", Phone: "+14155550166", PhoneAsTyped: "415.555.0166", Service: "iMessage", Role: "friend", Weight: 6},
	{Key: "isla", First: "Isla", Last: "Reid", Phone: "+14155550191", PhoneAsTyped: "(415) 555-0191", Service: "SMS", Role: "friend", Weight: 5},
	{Key: "hugo", First: "Hugo", Last: "Petit", Phone: "+14155550105", PhoneAsTyped: "(415) 555-0105", Service: "iMessage", Role: "friend", Weight: 4},
	{Key: "grace", First: "Grace", Last: "Liu", Phone: "+14155550127", PhoneAsTyped: "(415) 555-0127", Service: "iMessage", Role: "acquaintance", Weight: 3},
	{Key: "ben", First: "Ben", Last: "Carter", Phone: "+15105550131", PhoneAsTyped: "(510) 555-0131", Service: "SMS", Role: "acquaintance", Weight: 3},
	{Key: "lily", First: "Lily", Last: "Evans", Phone: "+14155550142", PhoneAsTyped: "(415) 555-0142", Service: "iMessage", Role: "acquaintance", Weight: 2},
	{Key: "oscar", First: "Oscar", Last: "Lindqvist", Phone: "+14155550159", PhoneAsTyped: "(415) 555-0159", Service: "iMessage", Role: "acquaintance", Weight: 2},
	{Key: "aunt", First: "Carol", Last: "Morgan", Nickname: "Aunt Carol", Phone: "+16175550145", PhoneAsTyped: "(617) 555-0145", Service: "SMS", Role: "family", Weight: 4},
	{Key: "grandma", First: "Ruth", Last: "Morgan", Nickname: "Grandma", Phone: "+16175550107", PhoneAsTyped: "(617) 555-0107", Service: "SMS", Role: "family", Weight: 3},
	{Key: "dev", First: "Dev", Last: "Raman", Org: "Northwind", Phone: "+14155550114", PhoneAsTyped: "(415) 555-0114", Email: "dev.raman@northwind.example", Service: "iMessage", Role: "work", Weight: 12},
	{Key: "hannah", First: "Hannah", Last: "Weiss", Org: "Northwind", Phone: "+14155550135", PhoneAsTyped: "(415) 555-0135", Service: "iMessage", Role: "work", Weight: 8},
	{Key: "felix", First: "Felix", Last: "Osei", Org: "Northwind", Phone: "+14155550148", PhoneAsTyped: "(415) 555-0148", Service: "iMessage", Role: "work", Weight: 6},
	{Key: "tom", First: "Tom", Last: "Gallagher", Org: "Northwind", Phone: "+14155550189", PhoneAsTyped: "(415) 555-0189", Service: "SMS", Role: "work", Weight: 4},
	{Key: "vet", Org: "Mission Pet Clinic", Phone: "+14155550116", PhoneAsTyped: "(415) 555-0116", Service: "SMS", Role: "service", Weight: 1},
	{Key: "mechanic", First: "Luis", Last: "Ortega", Org: "Ortega Auto", Phone: "+15105550168", PhoneAsTyped: "(510) 555-0168", Service: "SMS", Role: "service", Weight: 1},
	{Key: "unknown1", Phone: "+14155550198", Service: "SMS", Role: "acquaintance", Weight: 1, NoCard: true},
	{Key: "unknown2", Phone: "+12125550176", Service: "SMS", Role: "acquaintance", Weight: 1, NoCard: true},
}

// People returns every person of the demo data (a copy).
func People() []Person { return append([]Person(nil), people...) }

func personByKey(key string) Person {
	for _, p := range people {
		if p.Key == key {
			return p
		}
	}
	panic("demo: unknown person " + key)
}

// group is a filler or storyline group chat.
type group struct {
	key     string
	name    string // display_name; empty for an unnamed group
	members []string
	weight  int
	role    string // template family: "friend", "family", "work"
}

var groups = []group{
	{key: "lisbon", name: "Lisbon trip 🇵🇹", members: []string{"sam", "jordan", "maya", "lea"}, weight: 6, role: "friend"},
	{key: "family", name: "Morgan family", members: []string{"mom", "dad", "emma"}, weight: 30, role: "family"},
	{key: "climbing", name: "Climbing crew 🧗", members: []string{"nina", "omar", "kai", "zoe"}, weight: 20, role: "friend"},
	{key: "bookclub", name: "Book club", members: []string{"chloe", "ava", "grace", "ruby", "lily"}, weight: 8, role: "friend"},
	{key: "platform", name: "Platform team", members: []string{"priya", "dev", "hannah", "felix"}, weight: 18, role: "work"},
	{key: "soccer", name: "Sunday soccer ⚽", members: []string{"noah", "theo", "oscar", "omar", "kai", "hugo"}, weight: 10, role: "friend"},
	{key: "unnamed", name: "", members: []string{"sam", "nina", "zoe"}, weight: 9, role: "friend"},
}

// vcard writes the contacts file: one vCard 3.0 per person with a card,
// plus a second card for Lukas (the same number typed differently, with his
// work email), as address books full of duplicates have.
func vcard() []byte {
	var b strings.Builder
	card := func(uid string, p Person, phoneTyped, email, org string) {
		b.WriteString("BEGIN:VCARD\r\nVERSION:3.0\r\n")
		fmt.Fprintf(&b, "UID:%s\r\n", uid)
		fmt.Fprintf(&b, "N:%s;%s;;;\r\n", vEscape(p.Last), vEscape(p.First))
		fn := p.Name()
		fmt.Fprintf(&b, "FN:%s\r\n", vEscape(fn))
		if p.Nickname != "" {
			fmt.Fprintf(&b, "NICKNAME:%s\r\n", vEscape(p.Nickname))
		}
		if org != "" {
			fmt.Fprintf(&b, "ORG:%s\r\n", vEscape(org))
		}
		if phoneTyped != "" {
			fmt.Fprintf(&b, "TEL;TYPE=CELL,VOICE:%s\r\n", phoneTyped)
		}
		if email != "" {
			fmt.Fprintf(&b, "EMAIL;TYPE=INTERNET:%s\r\n", email)
		}
		b.WriteString("END:VCARD\r\n")
	}
	b.Grow(8192)
	for i, p := range people {
		if p.NoCard {
			continue
		}
		typed := p.PhoneAsTyped
		if typed == "" {
			typed = p.Phone
		}
		card(fmt.Sprintf("tidings-demo-%03d", i+1), p, typed, p.Email, p.Org)
		if p.Key == "lukas" {
			card("tidings-demo-lukas-work", Person{First: "Lukas", Last: "Becker"}, "+49 (0)30 23125 467", "lukas.becker@northwind.example", "Northwind GmbH")
		}
	}
	return []byte(b.String())
}

// vEscape escapes a vCard 3.0 text value.
func vEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, ",", `\,`, ";", `\;`, "\n", `\n`)
	return r.Replace(s)
}
