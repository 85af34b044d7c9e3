package web

import (
	"bytes"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"
)

// extract reduces an HTML document to its title and readable text with
// go-readability (Mozilla's Readability algorithm; the choice is recorded
// in docs/dependencies.md): navigation, footers, scripts, styles, hidden
// elements and boilerplate are dropped. When Readability finds no article
// (a short page, a listing), the whole body's rendered text is used, so a
// page is never reported empty while it has text.
func extract(doc []byte, pageURL *url.URL) (title, text string) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return "", ""
	}
	p := readability.NewParser()
	a, err := p.ParseDocument(root, pageURL) // works on a copy: root stays whole
	if err == nil {
		title = strings.TrimSpace(a.Title())
		if a.Node != nil {
			text = strings.TrimSpace(render.InnerText(a.Node))
		}
	}
	if title == "" {
		title = docTitle(root)
	}
	if text == "" {
		text = strings.TrimSpace(render.InnerText(root))
	}
	return title, text
}

// docTitle is the text of the first <title> element.
func docTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.Data == "title" {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := docTitle(c); t != "" {
			return t
		}
	}
	return ""
}
