package typedstream_test

import (
	"fmt"

	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
)

func ExampleAttributedBody() {
	// A body as Messages writes it: "Hi Dad" with a mention on "Dad".
	blob, err := typedstream.EncodeAttributedBody("Hi Dad 👋", []typedstream.Run{
		{Start: 0, End: 3, Part: 0},
		{Start: 3, End: 6, Part: 0, Mention: "+15558675309"},
		{Start: 6, End: 11, Part: 0},
	})
	if err != nil {
		panic(err)
	}
	text, runs, err := typedstream.AttributedBody(blob)
	if err != nil {
		panic(err) // a caller falls back to message.text here
	}
	fmt.Printf("%q\n", text)
	for _, r := range runs {
		fmt.Printf("bytes [%d,%d) utf16 [%d,+%d) part %d mention %q\n", r.Start, r.End, r.Location, r.Length, r.Part, r.Mention)
	}
	// Output:
	// "Hi Dad 👋"
	// bytes [0,3) utf16 [0,+3) part 0 mention ""
	// bytes [3,6) utf16 [3,+3) part 0 mention "+15558675309"
	// bytes [6,11) utf16 [6,+3) part 0 mention ""
}

func ExampleDecode() {
	blob, err := typedstream.EncodeValue(typedstream.Dictionary{
		Keys:   []typedstream.Value{typedstream.String("n")},
		Values: []typedstream.Value{typedstream.Number{Type: 'q', Int: 42}},
	})
	if err != nil {
		panic(err)
	}
	a, err := typedstream.Decode(blob)
	if err != nil {
		panic(err)
	}
	root := a.Groups[0].Values[0].(*typedstream.Object)
	fmt.Println(root.Class.Chain())
	n, _ := a.Root().(typedstream.Dictionary).Get("n").(typedstream.Number).Int64()
	fmt.Println(n)
	// Output:
	// [NSDictionary NSObject]
	// 42
}
