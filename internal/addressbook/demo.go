package addressbook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DemoDir is the demo data set's vCard folder, written next to the demo
// chat.db by `serve --demo` and served as the folder account "Demo"
// (docs/tools.md, "Contacts").
const DemoDir = "contacts-cards"

// demoCards are made-up people of the demo messages (the same numbers, so
// the cards and the conversations are one person) and two groups, one of
// each kind.
var demoCards = map[string]string{
	"maya.vcf":  "VERSION:3.0\r\nUID:demo-maya\r\nN:Chen;Maya;;;\r\nFN:Maya Chen\r\nTEL;TYPE=CELL:+1 415 555 0152\r\nEMAIL:maya.chen@mail.example\r\nNOTE:Climbing partner. Allergic to peanuts.\r\n",
	"linda.vcf": "VERSION:3.0\r\nUID:demo-linda\r\nN:Morgan;Linda;;;\r\nFN:Linda Morgan\r\nNICKNAME:Mom\r\nTEL;TYPE=CELL:(617) 555-0192\r\nADR;TYPE=HOME:;;12 Elm Street;Boston;MA;02118;USA\r\n",
	"emma.vcf":  "VERSION:4.0\r\nUID:urn:uuid:demo-emma\r\nN:Morgan;Emma;;;\r\nFN:Emma Morgan\r\nTEL;VALUE=uri;TYPE=cell:tel:+1-617-555-0118\r\nBDAY:--0612\r\n",
	"family.vcf": "VERSION:3.0\r\nUID:demo-family\r\nN:Family;;;;\r\nFN:Family\r\nX-ADDRESSBOOKSERVER-KIND:group\r\n" +
		"X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:demo-linda\r\nX-ADDRESSBOOKSERVER-MEMBER:urn:uuid:demo-emma\r\n",
	"climbing.vcf": "VERSION:4.0\r\nUID:demo-climbing\r\nKIND:group\r\nFN:Climbing crew\r\nMEMBER:urn:uuid:demo-maya\r\n",
}

// WriteDemo writes the demo vCard folder into dir and returns it: every
// .vcf of the folder is replaced, so the demo starts as generated each
// time, and each file is written atomically.
func WriteDemo(dir string) (string, error) {
	folder := filepath.Join(dir, DemoDir)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return "", fmt.Errorf("demo contacts: %w", err)
	}
	ents, err := os.ReadDir(folder)
	if err != nil {
		return "", fmt.Errorf("demo contacts: %w", err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".vcf") {
			if _, ok := demoCards[e.Name()]; !ok {
				os.Remove(filepath.Join(folder, e.Name()))
			}
		}
	}
	f := NewFolder("Demo", folder)
	for name, body := range demoCards {
		data := []byte("BEGIN:VCARD\r\n" + body + "END:VCARD\r\n")
		if _, err := f.Put(context.Background(), Book{}, name, "", data, Cond{}); err != nil {
			return "", fmt.Errorf("demo contacts: %w", err)
		}
	}
	return folder, nil
}
