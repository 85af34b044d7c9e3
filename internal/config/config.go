// Package config builds Tidings' one plain configuration value from, in
// decreasing precedence, command-line flags, TIDINGS_* environment variables,
// $TIDINGS_HOME/config.toml and built-in defaults.
//
// Every setting is a field of Config whose struct tags say where it can come
// from, so adding a setting is one line:
//
//	Foo string `toml:"foo" env:"TIDINGS_FOO" flag:"foo" default:"bar" usage:"what foo does"`
//
// Tags: toml (key in config.toml; "-" = not settable from the file), env
// (environment variable), flag (command-line flag; a command exposes it with
// Bind), key (the setting's name when toml is "-"), default (a default
// parsed like an environment value), usage (flag
// help), sep (list separator for env values; default ","). Supported field
// kinds: string, bool, int, []string, nested structs (a TOML table whose
// fields carry their own tags) and, from config.toml only, slices of structs
// (arrays of tables such as [[mail.accounts]]; accounts.go). Commands choose
// which flags they accept, so `tidings serve -h` lists only what serve reads.
//
// The clock is part of the configuration: TIDINGS_NOW (RFC 3339) pins Now,
// which every package must use instead of time.Now wherever "now" changes an
// answer (review windows, "last week", nonce expiry), so runs are
// reproducible.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	// The zone database is embedded so that timezone names resolve on a
	// machine without /usr/share/zoneinfo (a minimal container) exactly as
	// on one with it.
	_ "time/tzdata"

	"github.com/BurntSushi/toml"
)

// Config is every setting of a Tidings process. Zero values are never used
// directly: Load fills defaults first.
type Config struct {
	// Home holds the index, the config file and runtime state.
	Home string `toml:"-" env:"TIDINGS_HOME" flag:"home" usage:"Tidings data folder (default: platform data dir)"`
	// NowRaw pins the clock (RFC 3339); empty = the real clock. Use Now.
	NowRaw string `toml:"-" key:"now" env:"TIDINGS_NOW" usage:"fixed clock (RFC 3339) for reproducible runs"`
	// Region is the default phone region (ISO 3166 alpha-2) for numbers
	// written without a country code.
	Region string `toml:"region" env:"TIDINGS_REGION" flag:"region" default:"US" usage:"default phone region for numbers without a country code"`

	// Sources. Empty means "not configured"; macOS defaults point at the
	// live databases.
	IMessage   string   `toml:"imessage" env:"TIDINGS_IMESSAGE" flag:"imessage" usage:"path to chat.db (or sms.db)"`
	IOSBackup  string   `toml:"ios_backup" env:"TIDINGS_IOS_BACKUP" flag:"ios-backup" usage:"unencrypted iOS backup folder"`
	AndroidXML []string `toml:"android_xml" env:"TIDINGS_ANDROID_XML" sep:"pathlist" flag:"android-xml" usage:"SMS Backup & Restore XML export (repeatable)"`
	Contacts   []string `toml:"contacts" env:"TIDINGS_CONTACTS" sep:"pathlist" flag:"contacts" usage:"contacts source: AddressBook folder/database or .vcf (repeatable)"`

	// Serving.
	Demo          bool   `toml:"demo" env:"TIDINGS_DEMO" flag:"demo" usage:"serve the synthetic demo data set instead of personal data"`
	HTTP          string `toml:"http" env:"TIDINGS_HTTP" flag:"http" usage:"serve Streamable HTTP (POST /mcp) and legacy SSE (GET /sse) on ADDR instead of stdio"`
	HTTPTokenFile string `toml:"http_token_file" env:"TIDINGS_HTTP_TOKEN_FILE" flag:"http-token-file" usage:"file (mode 0600) holding the bearer token required on non-loopback binds"`
	// HTTPToken is the bearer token itself; environment only, so it never
	// sits in a config file or a process list.
	HTTPToken string `toml:"-" key:"http_token" env:"TIDINGS_HTTP_TOKEN"`
	Bridge    string `toml:"bridge" env:"TIDINGS_BRIDGE" flag:"bridge" usage:"forward tool calls to a bridge helper through folder DIR"`
	Profile   string `toml:"profile" env:"TIDINGS_PROFILE" flag:"profile" usage:"TOML profile narrowing tools, access, external calls and file folders"`
	ReadOnly  bool   `toml:"read_only" env:"TIDINGS_READ_ONLY" flag:"read-only" usage:"never register write tools (beats every other setting)"`
	// EnableSend is the send quarantine switch. It is read from its exact
	// variable name, ENABLE_MCP_SEND_MESSAGE, only (docs/architecture.md): no
	// flag, no file key, so enabling sends is always a deliberate act in the
	// client's server configuration.
	EnableSend bool `toml:"-" key:"enable_send" env:"ENABLE_MCP_SEND_MESSAGE"`
	// EnableSendMail is mail's send switch (preview_mail, mail_send), read
	// from ENABLE_MCP_SEND_MAIL only, like EnableSend.
	EnableSendMail bool     `toml:"-" key:"enable_send_mail" env:"ENABLE_MCP_SEND_MAIL"`
	Toolsets       []string `toml:"toolsets" env:"TIDINGS_TOOLSETS" flag:"toolsets" usage:"comma-separated toolsets to enable (default: all)"`

	// Sending (internal/send): sends per rolling hour, and how long to wait for chat.db to confirm one.
	SendRateLimit     int `toml:"send_rate_limit" env:"TIDINGS_SEND_RATE_LIMIT" default:"10" usage:"most messages sent per rolling hour"`
	SendVerifySeconds int `toml:"send_verify_seconds" env:"TIDINGS_SEND_VERIFY_SECONDS" default:"8" usage:"seconds to wait for chat.db to confirm a sent message"`

	Embedder Embedder `toml:"embedder"`

	// The geocoder, weather and maps services (internal/geocode,
	// internal/weather, internal/maps; docs/configuration.md).
	Geocoder Geocoder `toml:"geocoder"`
	Weather  Weather  `toml:"weather"`
	Maps     Maps     `toml:"maps"`
	// LocationService is [location] (internal/location): where
	// location_get_current may ask for the position.
	LocationService LocationService `toml:"location"`
	// AllowExternal = false stops every configured endpoint that receives
	// message text (the http embedder, the dossier summary endpoint;
	// loopback counts) and every open-world tool; a profile's
	// allow_external can only make it stricter (docs/security.md,
	// "Open world").
	AllowExternal bool `toml:"allow_external" env:"TIDINGS_ALLOW_EXTERNAL" default:"true" usage:"allow endpoints and tools that reach beyond this machine (false: none, loopback endpoints included)"`

	// HardenedAllowlist is the root-owned allowlist of hardened mode
	// (internal/policy, "Hardened mode"): when set, the read policy is
	// allowlist whatever read_policy.txt says, and only this file's
	// entries are readable.
	HardenedAllowlist string `toml:"hardened_allowlist" env:"TIDINGS_HARDENED_ALLOWLIST" flag:"hardened-allowlist" usage:"root-owned allowlist file: read only the chats it lists (hardened read policy)"`

	// The optional generated dossier summary (internal/dossier): an
	// OpenAI-compatible chat endpoint, off unless URL and model are both
	// set; the API key is read from the environment only.
	SummaryURL    string `toml:"dossier_summary_url" env:"TIDINGS_DOSSIER_SUMMARY_URL" usage:"OpenAI-compatible chat endpoint (base URL) for generated dossier summaries; empty = off"`
	SummaryModel  string `toml:"dossier_summary_model" env:"TIDINGS_DOSSIER_SUMMARY_MODEL" usage:"model name for generated dossier summaries"`
	SummaryAPIKey string `toml:"-" key:"dossier_summary_api_key" env:"TIDINGS_DOSSIER_SUMMARY_API_KEY"`

	// Timezone is the IANA zone every date a service reads or writes is
	// in; empty = the system's. Use Location.
	Timezone string `toml:"timezone" env:"TIDINGS_TIMEZONE" usage:"IANA time zone (e.g. Europe/Berlin) for every date a service reads or writes; default: the system's"`

	// Accounts of the account-backed services (accounts.go), from
	// config.toml only: passwords come from password_env or password_cmd.
	Mail     Mail     `toml:"mail"`
	Calendar Calendar `toml:"calendar"`
	// ContactAccounts is [[contacts.accounts]]: CardDAV accounts and vCard
	// folders. The [contacts] table (sources and accounts) is decoded by
	// hand (decodeFile), because the old top-level contacts list shares
	// its key.
	ContactAccounts []ContactAccount `toml:"-"`

	LogLevel string `toml:"log_level" env:"TIDINGS_LOG_LEVEL" flag:"log-level" default:"info" usage:"log level: debug, info, warn, error (logs go to stderr)"`

	// Derived by Load; not settable.

	// Now returns the current time: the pinned TIDINGS_NOW or time.Now.
	Now func() time.Time `toml:"-"`
	// loc is Timezone loaded; see Location.
	loc *time.Location
	// ConfigFile is the config.toml that was read; empty when none exists.
	ConfigFile string `toml:"-"`
	// Origins records where each setting came from ("default", "file",
	// "env", "flag"), keyed by TOML-style path (e.g. "embedder.url"); doctor
	// and get_status show it.
	Origins map[string]string `toml:"-"`
}

// Embedder selects how text is embedded for semantic search.
type Embedder struct {
	Name      string `toml:"name" env:"TIDINGS_EMBEDDER" flag:"embedder" default:"builtin" usage:"embedder: builtin, model2vec, http"`
	URL       string `toml:"url" env:"TIDINGS_EMBEDDER_URL" flag:"embedder-url" usage:"OpenAI-compatible /v1/embeddings base URL (embedder=http)"`
	Model     string `toml:"model" env:"TIDINGS_EMBEDDER_MODEL" flag:"embedder-model" usage:"embedding model name or model folder"`
	APIKeyEnv string `toml:"api_key_env" env:"TIDINGS_EMBEDDER_API_KEY_ENV" flag:"embedder-api-key-env" usage:"name of the environment variable holding the embedder API key"`
}

// Geocoder is the shared geocoder of the weather and maps services. Its
// URLs are the user's choice and trusted (no SSRF refusal).
type Geocoder struct {
	Kind       string `toml:"kind" env:"TIDINGS_GEOCODER_KIND" default:"open-meteo" usage:"geocoder dialect: open-meteo or nominatim"`
	BaseURL    string `toml:"base_url" env:"TIDINGS_GEOCODER_URL" usage:"geocoder base URL (default: the kind's public service)"`
	ReverseURL string `toml:"reverse_url" env:"TIDINGS_GEOCODER_REVERSE_URL" usage:"Nominatim-compatible base URL for reverse lookups (default: base_url for nominatim, none for open-meteo)"`
}

// Weather configures the weather service (open-meteo's forecast API).
type Weather struct {
	BaseURL string `toml:"base_url" env:"TIDINGS_WEATHER_URL" default:"https://api.open-meteo.com/v1" usage:"open-meteo forecast API base URL"`
}

// Maps configures the maps links maps_get_directions and maps_open build.
type Maps struct {
	Provider string `toml:"provider" env:"TIDINGS_MAPS_PROVIDER" usage:"maps links: apple or openstreetmap (default: apple on macOS, else openstreetmap)"`
	BaseURL  string `toml:"base_url" env:"TIDINGS_MAPS_URL" usage:"https base URL of the maps site (default: the provider's)"`
}

// LocationService configures location_get_current's optional IP lookup
// (docs/configuration.md, "[location]").
type LocationService struct {
	IPURL string `toml:"ip_url" env:"TIDINGS_LOCATION_IP_URL" usage:"http(s) URL of an IP geolocation service answering JSON with latitude and longitude, for location_get_current (empty = none; reached through the SSRF guard)"`
}

// FileName is the config file's name inside Home.
const FileName = "config.toml"

// DefaultHome returns TIDINGS_HOME's default for goos:
// ~/Library/Application Support/Tidings on macOS, else
// ${XDG_DATA_HOME:-~/.local/share}/tidings.
func DefaultHome(goos string, getenv func(string) string) string {
	home := getenv("HOME")
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Tidings")
	}
	if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "tidings")
	}
	return filepath.Join(home, ".local", "share", "tidings")
}

// platformDefaults sets the defaults that depend on the OS: the live
// Messages database and the AddressBook on macOS.
func platformDefaults(c *Config, goos string, getenv func(string) string) {
	if goos != "darwin" {
		return
	}
	home := getenv("HOME")
	if home == "" {
		return
	}
	c.IMessage = filepath.Join(home, "Library", "Messages", "chat.db")
	c.Contacts = []string{filepath.Join(home, "Library", "Application Support", "AddressBook")}
}

// Loader collects a command's flags and turns them, the environment and the
// config file into a Config.
type Loader struct {
	fs    *flag.FlagSet
	flags map[string]*flagValue // by flag name
	// GOOS selects platform defaults; tests set it.
	GOOS string
	// ReadFile reads the config file; tests may replace it.
	ReadFile func(string) ([]byte, error)
}

// Bind registers on fs the flags of the named settings (flag names such as
// "http", "read-only"); with no names, every setting that has a flag. It
// panics on an unknown name: that is a programming error.
func Bind(fs *flag.FlagSet, names ...string) *Loader {
	l := &Loader{fs: fs, flags: map[string]*flagValue{}, GOOS: runtime.GOOS, ReadFile: os.ReadFile}
	all := fieldsOf(reflect.TypeFor[Config]())
	byFlag := map[string]field{}
	for _, f := range all {
		if f.flag != "" {
			byFlag[f.flag] = f
		}
	}
	if len(names) == 0 {
		for n := range byFlag {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	for _, n := range names {
		f, ok := byFlag[n]
		if !ok {
			panic(fmt.Sprintf("config.Bind: no setting has flag %q", n))
		}
		fv := &flagValue{kind: f.typ.Kind()}
		l.flags[n] = fv
		if fs != nil {
			fs.Var(fv, n, f.usage)
		}
	}
	return l
}

// Load resolves the configuration. Call it after fs.Parse. getenv reads the
// environment (os.Getenv in production).
func (l *Loader) Load(getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Config{Origins: map[string]string{}}
	fields := fieldsOf(reflect.TypeFor[Config]())
	root := reflect.ValueOf(c).Elem()

	// 1. Defaults.
	platformDefaults(c, l.GOOS, getenv)
	for _, f := range fields {
		v := f.value(root)
		if f.def != "" {
			if err := setString(v, f.def, ","); err != nil {
				return nil, fmt.Errorf("default for %s: %w", f.key, err)
			}
		}
		if !v.IsZero() {
			c.Origins[f.key] = "default"
		}
	}
	c.Home = DefaultHome(l.GOOS, getenv)
	c.Origins["home"] = "default"

	// Home decides where the file is, so resolve it first (flag > env).
	if v := getenv("TIDINGS_HOME"); v != "" {
		c.Home = v
		c.Origins["home"] = "env"
	}
	if fv := l.flags["home"]; fv != nil && fv.set {
		c.Home = fv.vals[len(fv.vals)-1]
		c.Origins["home"] = "flag"
	}

	// 2. The config file.
	path := filepath.Join(c.Home, FileName)
	data, err := l.ReadFile(path)
	switch {
	case err == nil:
		if err := decodeFile(c, data, fields); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.ConfigFile = path
	case errors.Is(err, os.ErrNotExist):
	default:
		return nil, fmt.Errorf("read config: %w", err)
	}

	// 3. Environment.
	for _, f := range fields {
		if f.env == "" || f.key == "home" {
			continue
		}
		raw, ok := lookup(getenv, f.env)
		if !ok {
			continue
		}
		if err := setString(f.value(root), raw, f.sep()); err != nil {
			return nil, fmt.Errorf("environment variable %s: %w", f.env, err)
		}
		c.Origins[f.key] = "env"
	}

	// 4. Flags.
	for _, f := range fields {
		fv := l.flags[f.flag]
		if f.flag == "" || fv == nil || !fv.set || f.key == "home" {
			continue
		}
		v := f.value(root)
		if v.Kind() == reflect.Slice {
			var list []string
			for _, s := range fv.vals {
				list = append(list, splitList(s, ",")...)
			}
			if f.sep() != "," { // paths: each occurrence is one path
				list = fv.vals
			}
			v.Set(reflect.ValueOf(list))
		} else if err := setString(v, fv.vals[len(fv.vals)-1], ","); err != nil {
			return nil, fmt.Errorf("flag --%s: %w", f.flag, err)
		}
		c.Origins[f.key] = "flag"
	}

	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// finish validates the result and derives Now.
func (c *Config) finish() error {
	c.Now = time.Now
	if c.NowRaw != "" {
		t, err := time.Parse(time.RFC3339Nano, c.NowRaw)
		if err != nil {
			return fmt.Errorf("TIDINGS_NOW %q is not an RFC 3339 time (e.g. 2026-11-30T09:00:00Z): %w", c.NowRaw, err)
		}
		c.Now = func() time.Time { return t }
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
		c.LogLevel = strings.ToLower(c.LogLevel)
	default:
		return fmt.Errorf("log level %q: want debug, info, warn or error", c.LogLevel)
	}
	if len(c.Region) != 2 {
		return fmt.Errorf("region %q: want a two-letter ISO 3166 code such as US or DE", c.Region)
	}
	c.Region = strings.ToUpper(c.Region)
	switch c.Embedder.Name {
	case "builtin", "model2vec", "http":
	default:
		return fmt.Errorf("embedder %q: want builtin, model2vec or http", c.Embedder.Name)
	}
	c.loc = time.Local
	if c.Timezone != "" {
		loc, err := time.LoadLocation(c.Timezone)
		if err != nil {
			return fmt.Errorf("timezone %q (%s) is not an IANA time zone name such as Europe/Berlin, America/New_York or UTC",
				c.Timezone, c.timezoneSource())
		}
		c.loc = loc
	}
	return nil
}

// timezoneSource names where the timezone setting came from, for errors.
func (c *Config) timezoneSource() string {
	if c.Origins["timezone"] == "env" {
		return "TIDINGS_TIMEZONE"
	}
	return "timezone in " + FileName
}

// Location is the one time zone of every date a service reads or writes
// (docs/configuration.md "Time zone"): the timezone setting, else the
// system's (time.Local, which honours TZ). A Config not made by Load
// answers time.Local.
func (c *Config) Location() *time.Location {
	if c == nil || c.loc == nil {
		return time.Local
	}
	return c.loc
}

// Path returns a file or folder inside Home.
func (c *Config) Path(elem ...string) string {
	return filepath.Join(append([]string{c.Home}, elem...)...)
}

// lookup reads an environment variable; an empty value counts as unset, so
// `TIDINGS_X= tidings serve` does not override a file setting with nothing.
func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// decodeFile applies config.toml, rejecting keys that no setting has.
//
// The top-level contacts key is either today's list of paths or the table
// holding [[contacts.accounts]]; TOML cannot hold both, so the file is
// decoded into a copy of Config whose contacts field is a toml.Primitive
// and the two forms are told apart by the value's type.
func decodeFile(c *Config, data []byte, fields []field) error {
	fv := reflect.New(fileType())
	md, err := toml.Decode(string(data), fv.Interface())
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) && strings.Contains(pe.Message, "'contacts'") {
			return errors.New(`contacts = [...] and a [contacts] table cannot both be in the file (TOML lets "contacts" be a list or a table, not both): move the paths into the table as [contacts] sources = [...]`)
		}
		if strings.Contains(err.Error(), `.password_cmd"`) && strings.Contains(err.Error(), "type string") {
			return errors.New(`password_cmd is a list of arguments run without a shell, e.g. ["pass", "show", "mail/work"], not a command line`)
		}
		return fmt.Errorf("parse: %w", err)
	}
	var fc Config
	src := reflect.ValueOf(&fc).Elem()
	for i := range src.NumField() {
		if i != contactsField() && src.Type().Field(i).IsExported() {
			src.Field(i).Set(fv.Elem().Field(i))
		}
	}
	contactsList := false
	if md.IsDefined("contacts") {
		prim := fv.Elem().Field(contactsField()).Interface().(toml.Primitive)
		if md.Type("contacts") == "Array" {
			// The old form: still read, with one notice naming the new
			// one (docs/configuration.md, "Contacts").
			contactsList = true
			if err := md.PrimitiveDecode(prim, &fc.Contacts); err != nil {
				return fmt.Errorf("contacts: want a list of paths: %w", err)
			}
			slog.Info(`config.toml: contacts = [...] is the old form of the contacts sources; write [contacts] sources = [...] instead (docs/configuration.md, "Contacts")`)
		} else {
			var table contactsTable
			if err := md.PrimitiveDecode(prim, &table); err != nil {
				return fmt.Errorf("contacts: want a [contacts] table (sources = [...], [[contacts.accounts]]) or the old list of paths: %w", err)
			}
			fc.ContactAccounts = table.Accounts
			if md.IsDefined("contacts", "sources") {
				contactsList = true
				fc.Contacts = table.Sources
			}
		}
	}
	if und := md.Undecoded(); len(und) > 0 {
		return unknownKey(und[0].String(), fields)
	}
	dst := reflect.ValueOf(c).Elem()
	for _, f := range fields {
		if f.key == "" || !md.IsDefined(strings.Split(f.key, ".")...) || (f.key == "contacts" && !contactsList) {
			continue
		}
		f.value(dst).Set(f.value(src))
		c.Origins[f.key] = "file"
	}
	if md.IsDefined("contacts", "accounts") {
		c.ContactAccounts = fc.ContactAccounts
		c.Origins["contacts.accounts"] = "file"
	}
	return c.validateAccounts()
}

// unknownKey is the error for a key no setting has; inside an array of
// tables it lists that table's keys.
func unknownKey(key string, fields []field) error {
	for _, f := range fields {
		if f.typ.Kind() == reflect.Slice && f.typ.Elem().Kind() == reflect.Struct && strings.HasPrefix(key, f.key+".") {
			return fmt.Errorf("unknown key %q (keys of [[%s]]: %s)", key, f.key, strings.Join(tableKeys(f.typ.Elem()), ", "))
		}
	}
	if strings.HasPrefix(key, "contacts.accounts.") {
		return fmt.Errorf("unknown key %q (keys of [[contacts.accounts]]: %s)", key, strings.Join(tableKeys(reflect.TypeFor[ContactAccount]()), ", "))
	}
	if strings.HasPrefix(key, "contacts.") {
		return fmt.Errorf("unknown key %q (keys of [contacts]: %s)", key, strings.Join(tableKeys(reflect.TypeFor[contactsTable]()), ", "))
	}
	return fmt.Errorf("unknown key %q (known keys: %s)", key, strings.Join(fileKeys(fields), ", "))
}

// tableKeys lists the TOML keys of an array-of-tables element.
func tableKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		out = append(out, t.Field(i).Tag.Get("toml"))
	}
	return out
}

// fileType is Config with the contacts field turned into a toml.Primitive
// (decodeFile); the other fields keep their index, type and tags.
var fileType = sync.OnceValue(func() reflect.Type {
	t := reflect.TypeFor[Config]()
	fs := make([]reflect.StructField, t.NumField())
	for i := range fs {
		fs[i] = t.Field(i)
		if i == contactsField() {
			fs[i].Type = reflect.TypeFor[toml.Primitive]()
		}
	}
	return reflect.StructOf(fs)
})

// contactsField is the index of Config.Contacts.
func contactsField() int {
	f, _ := reflect.TypeFor[Config]().FieldByName("Contacts")
	return f.Index[0]
}

func fileKeys(fields []field) []string {
	var out []string
	for _, f := range fields {
		if f.key != "" && f.fileOK {
			out = append(out, f.key)
		}
	}
	return append(out, "contacts.sources", "contacts.accounts")
}

// contactsTable is the [contacts] table: the read sources and the
// accounts the Contacts service writes to.
type contactsTable struct {
	Sources  []string         `toml:"sources"`
	Accounts []ContactAccount `toml:"accounts"`
}

// field is one leaf setting found by walking Config's struct tags.
type field struct {
	index  []int
	typ    reflect.Type
	key    string // TOML path ("embedder.url"); also the Origins key
	fileOK bool   // settable from config.toml
	env    string
	flag   string
	def    string
	usage  string
	sepTag string
}

func (f field) value(root reflect.Value) reflect.Value { return root.FieldByIndex(f.index) }

func (f field) sep() string {
	switch f.sepTag {
	case "":
		return ","
	case "pathlist":
		return string(os.PathListSeparator)
	}
	return f.sepTag
}

// fieldsOf lists the leaf settings of t in declaration order.
func fieldsOf(t reflect.Type) []field {
	var out []field
	var walk func(t reflect.Type, index []int, prefix string)
	walk = func(t reflect.Type, index []int, prefix string) {
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			tomlTag := sf.Tag.Get("toml")
			idx := append(append([]int(nil), index...), i)
			if sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, idx, prefix+tomlTag+".")
				continue
			}
			env, fl := sf.Tag.Get("env"), sf.Tag.Get("flag")
			if tomlTag == "-" && env == "" && fl == "" {
				continue // derived field
			}
			switch sf.Type.Kind() {
			case reflect.String, reflect.Bool, reflect.Int:
			case reflect.Slice:
				switch sf.Type.Elem().Kind() {
				case reflect.String:
				case reflect.Struct: // an array of tables: config.toml only
					if env != "" || fl != "" || sf.Tag.Get("default") != "" {
						panic("config: a slice of structs comes from config.toml only: " + sf.Name)
					}
				default:
					panic("config: unsupported slice field " + sf.Name)
				}
			default:
				panic("config: unsupported field kind " + sf.Name)
			}
			key := prefix + tomlTag
			fileOK := tomlTag != "-"
			if !fileOK {
				key = prefix + sf.Tag.Get("key")
				if sf.Tag.Get("key") == "" {
					key = prefix + strings.ToLower(sf.Name)
				}
			}
			out = append(out, field{index: idx, typ: sf.Type, key: key, fileOK: fileOK, env: env, flag: fl,
				def: sf.Tag.Get("default"), usage: sf.Tag.Get("usage"), sepTag: sf.Tag.Get("sep")})
		}
	}
	walk(t, nil, "")
	return out
}

// setString parses raw into v by v's kind.
func setString(v reflect.Value, raw, sep string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(raw)
	case reflect.Bool:
		b, err := parseBool(raw)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("%q is not an integer", raw)
		}
		v.SetInt(int64(n))
	case reflect.Slice:
		v.Set(reflect.ValueOf(splitList(raw, sep)))
	}
	return nil
}

// parseBool accepts the spellings people put in environment variables.
func parseBool(raw string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (use true or false)", raw)
}

func splitList(raw, sep string) []string {
	var out []string
	for _, p := range strings.Split(raw, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// flagValue records every occurrence of a flag; Load applies them after the
// environment so flags win.
type flagValue struct {
	kind reflect.Kind
	vals []string
	set  bool
}

func (f *flagValue) String() string {
	if f == nil || len(f.vals) == 0 {
		return ""
	}
	return strings.Join(f.vals, ",")
}

func (f *flagValue) Set(s string) error {
	if f.kind == reflect.Bool {
		if _, err := parseBool(s); err != nil {
			return err
		}
	}
	f.vals = append(f.vals, s)
	f.set = true
	return nil
}

// IsBoolFlag lets boolean settings be given as a bare --name.
func (f *flagValue) IsBoolFlag() bool { return f.kind == reflect.Bool }

// Keys lists every setting: its TOML key, environment variable, flag and
// usage, for documentation and `tidings doctor`.
func Keys() []KeyInfo {
	var out []KeyInfo
	for _, f := range fieldsOf(reflect.TypeFor[Config]()) {
		k := KeyInfo{Env: f.env, Flag: f.flag, Default: f.def, Usage: f.usage}
		if f.fileOK {
			k.TOML = f.key
		}
		out = append(out, k)
	}
	// The [contacts] table is decoded by hand (decodeFile): the contacts
	// setting above is its sources (or the old top-level list).
	for i := range out {
		if out[i].TOML == "contacts" {
			out[i].TOML = "contacts.sources"
		}
	}
	return append(out, KeyInfo{TOML: "contacts.accounts", Usage: "contacts accounts: CardDAV (url) or a vCard folder (folder)"})
}

// KeyInfo describes one setting.
type KeyInfo struct {
	TOML, Env, Flag, Default, Usage string
}

// Remember writes key = values into the config.toml of home unless the
// file already sets key, so a source given once on the command line (the
// contacts `tidings index` loaded, the demo's files) is known to every
// later command of that home (docs/configuration.md, "Remembered
// sources"). A top-level key goes before the first table, where it must
// be; a table key ("contacts.sources") goes under its table's header, or
// into a new table at the end. The rest of the file is kept byte for
// byte. It reports whether
// it wrote. A file that does not parse is left alone (the next command
// reports it).
func Remember(home, key string, values []string) (bool, error) {
	path := filepath.Join(home, FileName)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	var top map[string]any
	md, err := toml.Decode(string(data), &top)
	table, leaf, inTable := strings.Cut(key, ".")
	if err != nil || md.IsDefined(strings.Split(key, ".")...) || (inTable && md.Type(table) == "Array") {
		// Already set (for a table key, also in the old top-level list
		// form of its table's name, e.g. contacts = [...]).
		return false, nil
	}
	var line strings.Builder
	fmt.Fprintf(&line, "# remembered by tidings (%s given on the command line)\n%s = [", key, leaf)
	if !inTable {
		line.Reset()
		fmt.Fprintf(&line, "# remembered by tidings (%s given on the command line)\n%s = [", key, key)
	}
	for i, v := range values {
		if i > 0 {
			line.WriteString(", ")
		}
		line.WriteString(tomlString(v))
	}
	line.WriteString("]\n")
	text := string(data)
	var out string
	if inTable {
		out = rememberInTable(text, table, line.String())
	} else {
		at := len(text)
		for i := 0; i < len(text); {
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			if strings.HasPrefix(strings.TrimSpace(text[i:i+end]), "[") {
				at = i
				break
			}
			i += end + 1
		}
		head := text[:at]
		if head != "" && !strings.HasSuffix(head, "\n") {
			head += "\n"
		}
		out = head + line.String() + text[at:]
	}
	if md, err := toml.Decode(out, &top); err != nil || !md.IsDefined(strings.Split(key, ".")...) {
		return false, fmt.Errorf("%s: could not add %s without changing the meaning of the file; add it by hand", path, key)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return false, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(out), 0o600); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}

// rememberInTable puts line (a key of table) right under the file's
// [table] header, or, when there is none, in a new [table] at the end of
// the file: a super-table may be declared after its sub-tables
// ([[contacts.accounts]]), so the rest of the file keeps its meaning.
func rememberInTable(text, table, line string) string {
	for i := 0; i < len(text); {
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text) - i
		}
		l := strings.TrimSpace(text[i : i+end])
		if l == "["+table+"]" || strings.HasPrefix(l, "["+table+"]") && strings.HasPrefix(strings.TrimSpace(l[len(table)+2:]), "#") {
			at := i + end
			if at < len(text) {
				at++
				return text[:at] + line + text[at:]
			}
			return text + "\n" + line
		}
		i += end + 1
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	return text + "[" + table + "]\n" + line
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
