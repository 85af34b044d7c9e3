//go:build !tidings_noheic

package imageview

import (
	"bytes"
	"image"
	"io"
	"os"
	"sync"

	"github.com/gen2brain/heic"
)

// HEIC/HEIF (the iPhone camera's default) is decoded by libheif and
// libde265 compiled to WebAssembly and run by wazero inside this process
// (github.com/gen2brain/heic): no cgo, and the C code runs in a sandbox
// with no access to files or the network. Both libraries are LGPL; the
// build tag tidings_noheic leaves the decoder out, and docs/dependencies.md
// says how the WebAssembly module is replaced.
func init() {
	decoders["heic"] = decoder{config: heicConfig, decode: heicDecode}
	HEIC = true
}

// heicReady compiles the WebAssembly module once. The module's standard
// output is bound to the process's os.Stdout when it is compiled, and in
// `tidings serve` stdout is the MCP channel: whatever the C code printed
// would land in the JSON-RPC stream. It is pointed at stderr while the
// module is set up, so the module's output can only reach the log.
var heicReady = sync.OnceFunc(func() {
	out := os.Stdout
	os.Stdout = os.Stderr
	defer func() { os.Stdout = out }()
	heic.Init()
})

func heicConfig(r io.Reader) (image.Config, error) {
	heicReady()
	// The decoder's header read takes one Read of up to 32 KB; hand it the
	// whole file so a short first Read cannot cut the header.
	b, err := io.ReadAll(r)
	if err != nil {
		return image.Config{}, err
	}
	return heic.DecodeConfig(bytes.NewReader(b))
}

func heicDecode(r io.Reader) (image.Image, error) {
	heicReady()
	return heic.Decode(r)
}
