package main

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"hash"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/embed"
)

func init() {
	register(command{
		name:    "models",
		summary: "download and list embedding models (models pull NAME, models list)",
		run:     runModels,
	})
}

// Defaults of `tidings models pull`.
const (
	modelsDefaultBaseURL  = "https://huggingface.co"
	modelsDefaultRevision = "main"
	modelsManifestFile    = "tidings-model.json"
	// modelsMaxFileBytes bounds one downloaded file (potion models are
	// 8–130 MB; the largest static models are a few hundred MB).
	modelsMaxFileBytes = 4 << 30
)

// modelsFiles are the files of a Model2Vec model directory; the first two
// are required.
var modelsFiles = []struct {
	name     string
	required bool
}{
	{embed.Model2VecWeightsFile, true},
	{embed.Model2VecTokenizerFile, true},
	{"config.json", false},
	{"README.md", false}, // the model card carries the licence
}

var modelsNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)

func runModels(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(m.Stdout, `Usage:
  tidings models pull NAME [--base-url URL] [--revision REV] [--home DIR]
      download a Model2Vec model (e.g. minishlab/potion-base-8M) into
      $TIDINGS_HOME/models/NAME, verify it and install it atomically
  tidings models list [--home DIR]
      list installed models

Use a pulled model with TIDINGS_EMBEDDER=model2vec TIDINGS_EMBEDDER_MODEL=NAME
(or [embedder] name = "model2vec", model = "NAME" in config.toml).
`)
		return nil
	}
	switch args[0] {
	case "pull":
		return runModelsPull(ctx, m, args[1:])
	case "list":
		return runModelsList(m, args[1:])
	default:
		return usageError{fmt.Sprintf("unknown models subcommand %q (want pull or list)", args[0])}
	}
}

// modelsParse parses flags that may come before or after the positional
// arguments.
func modelsParse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runModelsPull(ctx context.Context, m *Main, args []string) error {
	fs := flag.NewFlagSet("models pull", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	base := fs.String("base-url", "", "model hub base URL (env TIDINGS_MODELS_BASE_URL; default "+modelsDefaultBaseURL+")")
	rev := fs.String("revision", "", "revision (branch, tag or commit; env TIDINGS_MODELS_REVISION; default main)")
	loader := config.Bind(fs, "home")
	pos, err := modelsParse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"models pull: want exactly one model name, e.g. minishlab/potion-base-8M"}
	}
	name := pos[0]
	if !modelsNameRE.MatchString(name) || strings.Contains(name, "..") {
		return usageError{fmt.Sprintf("models pull: %q is not a hub model name of the form owner/name", name)}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	if *base == "" {
		*base = m.Getenv("TIDINGS_MODELS_BASE_URL")
	}
	if *base == "" {
		*base = modelsDefaultBaseURL
	}
	if *rev == "" {
		*rev = m.Getenv("TIDINGS_MODELS_REVISION")
	}
	if *rev == "" {
		*rev = modelsDefaultRevision
	}
	if u, err := url.Parse(*base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return usageError{fmt.Sprintf("models pull: base URL %q is not an http(s) URL", *base)}
	}
	p := &modelPuller{base: strings.TrimRight(*base, "/"), rev: *rev, name: name, log: m.Stderr,
		client: &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 60 * time.Second,
			TLSHandshakeTimeout: 30 * time.Second, IdleConnTimeout: 30 * time.Second}}}
	dest := embed.ResolveModelDir(cfg.Home, name)
	man, err := p.pull(ctx, filepath.Join(cfg.Home, embed.ModelsDir), dest)
	if err != nil {
		return fmt.Errorf("models pull %s: %w", name, err)
	}
	fmt.Fprintf(m.Stdout, "installed %s (%d dimensions, %s) in %s\n", name, man.Dim, man.Verified, dest)
	fmt.Fprintf(m.Stdout, "use it with: TIDINGS_EMBEDDER=model2vec TIDINGS_EMBEDDER_MODEL=%s (or [embedder] name = \"model2vec\", model = %q in config.toml)\n", name, name)
	return nil
}

// modelManifest is written next to a pulled model: where it came from and
// what was verified.
type modelManifest struct {
	Name     string              `json:"name"`
	Revision string              `json:"revision"`
	Source   string              `json:"source"`
	PulledAt time.Time           `json:"pulled_at"`
	Files    []modelManifestFile `json:"files"`
	ModelID  string              `json:"model_id"`
	Dim      int                 `json:"dim"`
	// Verified says what was checked: "sha256+load" when the hub listed
	// hashes for every file, else "size+load" or "load".
	Verified string `json:"verified"`
}

type modelManifestFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// hubFile is what the hub's model API says about one file.
type hubFile struct {
	size   int64  // -1 unknown
	sha256 string // LFS files
	gitSHA string // git blob id (SHA-1 of "blob <size>\0" + content) for non-LFS files
}

type modelPuller struct {
	base, rev, name string
	client          *http.Client
	log             io.Writer
}

// metadata asks the hub API which files exist, with sizes and hashes. A
// hub without the API (or offline metadata) yields nil and no error: the
// pull then verifies by loading the model only.
func (p *modelPuller) metadata(ctx context.Context) (map[string]hubFile, error) {
	u := fmt.Sprintf("%s/api/models/%s/revision/%s?blobs=true", p.base, p.name, url.PathEscape(p.rev))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("model metadata: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		// Either no such model or no API; the file downloads will tell.
		return nil, nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("model metadata: %s (the model may be private or gated)", resp.Status)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("model metadata: %s", resp.Status)
	}
	var meta struct {
		Siblings []struct {
			Name   string `json:"rfilename"`
			Size   *int64 `json:"size"`
			BlobID string `json:"blobId"`
			LFS    *struct {
				SHA256 string `json:"sha256"`
				Size   int64  `json:"size"`
			} `json:"lfs"`
		} `json:"siblings"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&meta); err != nil {
		return nil, fmt.Errorf("model metadata: %w", err)
	}
	out := map[string]hubFile{}
	for _, s := range meta.Siblings {
		f := hubFile{size: -1}
		if s.Size != nil {
			f.size = *s.Size
		}
		if s.LFS != nil {
			f.sha256, f.size = strings.ToLower(s.LFS.SHA256), s.LFS.Size
		} else {
			f.gitSHA = strings.ToLower(s.BlobID)
		}
		out[s.Name] = f
	}
	return out, nil
}

// pull downloads into a temporary folder inside modelsRoot, verifies every
// file and a successful load, writes the manifest, then renames the folder
// into place (replacing an earlier install only after the new one is
// complete).
func (p *modelPuller) pull(ctx context.Context, modelsRoot, dest string) (*modelManifest, error) {
	meta, err := p.metadata(ctx)
	if err != nil {
		return nil, err
	}
	if meta != nil {
		for _, f := range modelsFiles {
			if _, ok := meta[f.name]; f.required && !ok {
				return nil, fmt.Errorf("the model has no %s: it is not in Model2Vec format", f.name)
			}
		}
	}
	if err := os.MkdirAll(modelsRoot, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(modelsRoot, ".pull-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // after a successful rename this is a no-op
	man := &modelManifest{Name: p.name, Revision: p.rev, Source: p.base, PulledAt: time.Now().UTC()}
	hashed, sized := 0, 0
	for _, f := range modelsFiles {
		hf, listed := meta[f.name]
		if meta != nil && !listed {
			continue // optional file the model does not have
		}
		mf, found, err := p.download(ctx, f.name, filepath.Join(tmp, f.name), hf, listed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if !found {
			if f.required {
				return nil, fmt.Errorf("%s: not found on the hub (is %q a Model2Vec model?)", f.name, p.name)
			}
			continue
		}
		if listed && (hf.sha256 != "" || hf.gitSHA != "") {
			hashed++
		}
		if listed && hf.size >= 0 {
			sized++
		}
		man.Files = append(man.Files, mf)
	}
	model, err := embed.LoadModel2Vec(tmp)
	if err != nil {
		return nil, fmt.Errorf("downloaded files do not load: %w", err)
	}
	v, err := model.Embed(ctx, []string{"a quick check that the model embeds text"})
	if err != nil {
		return nil, fmt.Errorf("downloaded model does not embed: %w", err)
	}
	n := 0.0
	for _, x := range v[0] {
		n += float64(x) * float64(x)
	}
	if math.Abs(math.Sqrt(n)-1) > 1e-3 {
		return nil, fmt.Errorf("downloaded model yields a vector of norm %.3f for ordinary text (vocabulary and tokenizer do not match?)", math.Sqrt(n))
	}
	man.ModelID, man.Dim = model.ID(), model.Dim()
	switch {
	case hashed == len(man.Files):
		man.Verified = "sha256+load"
	case sized == len(man.Files):
		man.Verified = "size+load"
	default:
		man.Verified = "load"
	}
	b, _ := json.MarshalIndent(man, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, modelsManifestFile), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, err
	}
	var old string
	if _, err := os.Stat(dest); err == nil {
		old = dest + ".old-" + filepath.Base(tmp)
		if err := os.Rename(dest, old); err != nil {
			return nil, fmt.Errorf("move the previous install aside: %w", err)
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		if old != "" {
			os.Rename(old, dest) // put the previous install back
		}
		return nil, fmt.Errorf("install: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return man, nil
}

// download fetches one file, checking size and hash against hf when the
// hub listed the file. It reports found=false for a 404.
func (p *modelPuller) download(ctx context.Context, name, path string, hf hubFile, listed bool) (modelManifestFile, bool, error) {
	mf := modelManifestFile{Name: name}
	u := fmt.Sprintf("%s/%s/resolve/%s/%s", p.base, p.name, url.PathEscape(p.rev), name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return mf, false, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return mf, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return mf, false, nil
	}
	if resp.StatusCode/100 != 2 {
		return mf, false, fmt.Errorf("download: %s", resp.Status)
	}
	if listed && hf.size >= 0 && resp.ContentLength >= 0 && resp.ContentLength != hf.size {
		return mf, false, fmt.Errorf("server sends %d bytes, the hub lists %d", resp.ContentLength, hf.size)
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return mf, false, err
	}
	defer out.Close()
	sum := sha256.New()
	var git hash.Hash
	if listed && hf.gitSHA != "" && hf.size >= 0 {
		git = sha1.New()
		fmt.Fprintf(git, "blob %d\x00", hf.size)
	}
	w := io.MultiWriter(out, sum)
	if git != nil {
		w = io.MultiWriter(out, sum, git)
	}
	fmt.Fprintf(p.log, "downloading %s/%s…\n", p.name, name)
	n, err := io.Copy(w, io.LimitReader(resp.Body, modelsMaxFileBytes+1))
	if err != nil {
		return mf, false, fmt.Errorf("download: %w", err)
	}
	if n > modelsMaxFileBytes {
		return mf, false, fmt.Errorf("larger than %d bytes", int64(modelsMaxFileBytes))
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return mf, false, fmt.Errorf("download cut short: %d of %d bytes", n, resp.ContentLength)
	}
	if err := out.Sync(); err != nil {
		return mf, false, err
	}
	mf.Size, mf.SHA256 = n, hex.EncodeToString(sum.Sum(nil))
	if listed {
		if hf.size >= 0 && n != hf.size {
			return mf, false, fmt.Errorf("size %d, the hub lists %d", n, hf.size)
		}
		if hf.sha256 != "" && mf.SHA256 != hf.sha256 {
			return mf, false, fmt.Errorf("sha256 %s, the hub lists %s", mf.SHA256, hf.sha256)
		}
		if git != nil {
			if got := hex.EncodeToString(git.Sum(nil)); got != hf.gitSHA {
				return mf, false, fmt.Errorf("git blob id %s, the hub lists %s", got, hf.gitSHA)
			}
		}
	}
	return mf, true, nil
}

func runModelsList(m *Main, args []string) error {
	fs := flag.NewFlagSet("models list", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	loader := config.Bind(fs, "home")
	pos, err := modelsParse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError{"models list takes no arguments"}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	root := filepath.Join(cfg.Home, embed.ModelsDir)
	matches, err := filepath.Glob(filepath.Join(root, "*", "*", modelsManifestFile))
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		fmt.Fprintf(m.Stdout, "no models installed in %s (try: tidings models pull minishlab/potion-base-8M)\n", root)
		return nil
	}
	for _, path := range matches {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var man modelManifest
		if err := json.Unmarshal(b, &man); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintf(m.Stdout, "%s\t%d dims\t%s\tpulled %s\t%s\n", man.Name, man.Dim, man.Verified, man.PulledAt.Format(time.DateOnly), filepath.Dir(path))
	}
	return nil
}
