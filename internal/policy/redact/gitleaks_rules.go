// The rules in this file are derived from the default configuration of
// gitleaks v8.30.1 (config/gitleaks.toml, generated from
// cmd/generate/config/rules/*.go), https://github.com/gitleaks/gitleaks.
// They were selected and adapted for text messages (see the notes on each
// rule and docs/redaction.md); gitleaks itself is not imported.
//
// gitleaks is distributed under the MIT License:
//
// MIT License
//
// Copyright (c) 2019 Zachary Rice
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

package redact

import (
	"regexp"
	"strings"
)

// Adaptations common to all rules, for text messages rather than source
// files:
//   - The trailing delimiter gitleaks requires after many tokens
//     ([\x60'"\s;] or end) also accepts , . ) ! ? ] > because in prose a
//     token is often followed by punctuation.
//   - Rules without a leading \b in gitleaks that match bare prefixes
//     (Twilio "SK…") get word boundaries, since prose is full of letters
//     around them.
const tokEnd = `(?:[\x60'"\s;,.)!?\]>]|\\[nr]|$)`

// semiGeneric builds gitleaks' "keyword … operator value" pattern
// (utils.GenerateSemiGenericRegex with case-insensitive identifiers). In
// messages only the assignment operators = := : => ?= bind a value; the
// comma, ">" and "||" that gitleaks accepts for source files join ordinary
// clauses in prose. Rules built with it carry the assignOps prefilter.
//
// The expression is anchored at the identifier: gitleaks' leading
// [\w.-]{0,50}? (the rest of a variable name such as "aws_secret_access_")
// only widens the match, so findAPIKeys instead runs the expression at each
// keyword occurrence and recovers the variable name for the allowlist by
// scanning back. This keeps the cost linear in short windows.
func semiGeneric(ids, value string) string {
	return `^(?i)(?:` + ids + `)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|:{1,3}=|:|=>|\?=)[\x60'"\s=]{0,5}(` + value + `)` + tokEnd
}

// assignOps is the prefilter of rules that need an assignment operator.
var assignOps = []string{"=", ":"}

// genericAllowRe is gitleaks' allowlist for generic-api-key (regexTarget
// "match"), minus the entries that only concern source files (Maven
// coordinates, Azure KeyVault, email headers, .env layouts).
var genericAllowRe = regexp.MustCompile(`(?i)(?:access(?:ibility|or)|access[_.-]?id|random[_.-]?access|api[_.-]?(?:id|name|version)|rapid|capital|author|(?:credentials?[_.-]?id|withCredentials)|(?:bucket|foreign|hot|idx|natural|primary|pub(?:lic)?|schema|sequence)[_.-]?key|(?:turkey)|key[_.-]?(?:alias|board|code|frame|id|length|mesh|name|pair|press(?:ed)?|ring|selector|signature|size|stone|storetype|word|up|down|left|right)|(?-i:[DdMm]onkey|[DM]ONKEY)|keying|(?:secret)[_.-]?(?:length|name|size)|(?:csrf)[_.-]?token|(?:api|credentials|token)[_.-]?(?:endpoint|ur[il])|public[_.-]?token|(?:key|token)[_.-]?file)`)

func mustRe(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }

// keyRules is the curated rule set. ids follow gitleaks' rule ids; rules
// marked "tidings" are not from gitleaks. minRun is this package's cheap
// prefilter (the shortest vendor token is 18 characters, generic values
// need 10) and comes on top of gitleaks' keywords.
var keyRules = []keyRule{
	// --- Cloud providers
	{id: "aws-access-token", minRun: 16, keywords: []string{"a3t", "akia", "asia", "abia", "acca"},
		re: mustRe(`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`), group: 1, entropy: 3,
		allow: func(s, _ string) bool { return strings.HasSuffix(s, "EXAMPLE") }},
	{id: "gcp-api-key", minRun: 16, keywords: []string{"aiza"},
		re: mustRe(`\b(AIza[\w-]{35})` + tokEnd), group: 1, entropy: 4},

	// --- Source hosting
	{id: "github-pat", minRun: 16, keywords: []string{"ghp_"}, re: mustRe(`ghp_[0-9a-zA-Z]{36}`), entropy: 3},
	{id: "github-oauth", minRun: 16, keywords: []string{"gho_"}, re: mustRe(`gho_[0-9a-zA-Z]{36}`), entropy: 3},
	{id: "github-app-token", minRun: 16, keywords: []string{"ghu_", "ghs_"}, re: mustRe(`(?:ghu|ghs)_[0-9a-zA-Z]{36}`), entropy: 3},
	{id: "github-refresh-token", minRun: 16, keywords: []string{"ghr_"}, re: mustRe(`ghr_[0-9a-zA-Z]{36}`), entropy: 3},
	{id: "github-fine-grained-pat", minRun: 16, keywords: []string{"github_pat_"}, re: mustRe(`github_pat_\w{82}`), entropy: 3},
	{id: "gitlab-pat", minRun: 16, keywords: []string{"glpat-"}, re: mustRe(`glpat-[\w-]{20}`), entropy: 3},
	{id: "gitlab-pat-routable", minRun: 16, keywords: []string{"glpat-"}, re: mustRe(`\bglpat-[0-9a-zA-Z_-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b`), entropy: 4},
	{id: "gitlab-deploy-token", minRun: 16, keywords: []string{"gldt-"}, re: mustRe(`gldt-[0-9a-zA-Z_\-]{20}`), entropy: 3},
	{id: "gitlab-ptt", minRun: 16, keywords: []string{"glptt-"}, re: mustRe(`glptt-[0-9a-f]{40}`), entropy: 3},
	{id: "gitlab-rrt", minRun: 16, keywords: []string{"gr1348941"}, re: mustRe(`GR1348941[\w-]{20}`), entropy: 3},
	{id: "gitlab-runner-authentication-token", minRun: 16, keywords: []string{"glrt-"}, re: mustRe(`glrt-[0-9a-zA-Z_\-]{20}`), entropy: 3},
	{id: "gitlab-runner-authentication-token-routable", minRun: 16, keywords: []string{"glrt-"}, re: mustRe(`\bglrt-t\d_[0-9a-zA-Z_\-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b`), entropy: 4},
	{id: "gitlab-cicd-job-token", minRun: 16, keywords: []string{"glcbt-"}, re: mustRe(`glcbt-[0-9a-zA-Z]{1,5}_[0-9a-zA-Z_-]{20}`), entropy: 3},
	{id: "gitlab-feed-token", minRun: 16, keywords: []string{"glft-"}, re: mustRe(`glft-[0-9a-zA-Z_\-]{20}`), entropy: 3},
	{id: "gitlab-incoming-mail-token", minRun: 16, keywords: []string{"glimt-"}, re: mustRe(`glimt-[0-9a-zA-Z_\-]{25}`), entropy: 3},
	{id: "gitlab-kubernetes-agent-token", minRun: 16, keywords: []string{"glagent-"}, re: mustRe(`glagent-[0-9a-zA-Z_\-]{50}`), entropy: 3},
	{id: "gitlab-oauth-app-secret", minRun: 16, keywords: []string{"gloas-"}, re: mustRe(`gloas-[0-9a-zA-Z_\-]{64}`), entropy: 3},
	{id: "gitlab-scim-token", minRun: 16, keywords: []string{"glsoat-"}, re: mustRe(`glsoat-[0-9a-zA-Z_\-]{20}`), entropy: 3},

	// --- Chat
	{id: "slack-bot-token", minRun: 16, keywords: []string{"xoxb"}, re: mustRe(`xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*`), entropy: 3},
	{id: "slack-legacy-bot-token", minRun: 16, keywords: []string{"xoxb"}, re: mustRe(`xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26}`), entropy: 2},
	{id: "slack-user-token", minRun: 16, keywords: []string{"xoxp-", "xoxe-"}, re: mustRe(`xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`), entropy: 2},
	{id: "slack-app-token", minRun: 16, keywords: []string{"xapp"}, re: mustRe(`(?i)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+`), entropy: 2},
	{id: "slack-legacy-token", minRun: 16, keywords: []string{"xoxo", "xoxs"}, re: mustRe(`xox[os]-\d+-\d+-\d+-[a-fA-F\d]+`), entropy: 2},
	{id: "slack-legacy-workspace-token", minRun: 16, keywords: []string{"xoxa", "xoxr"}, re: mustRe(`xox[ar]-(?:\d-)?[0-9a-zA-Z]{8,48}`), entropy: 2},
	{id: "slack-config-access-token", minRun: 16, keywords: []string{"xoxe.xoxb-", "xoxe.xoxp-"}, re: mustRe(`(?i)xoxe.xox[bp]-\d-[A-Z0-9]{163,166}`), entropy: 2},
	{id: "slack-config-refresh-token", minRun: 16, keywords: []string{"xoxe-"}, re: mustRe(`(?i)xoxe-\d-[A-Z0-9]{146}`), entropy: 2},
	{id: "slack-webhook-url", minRun: 16, keywords: []string{"hooks.slack.com"}, re: mustRe(`(?:https?://)?hooks.slack.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`)},
	{id: "discord-api-token", atKeywords: true, needs: assignOps, minRun: 10, keywords: []string{"discord"}, re: mustRe(semiGeneric(`discord`, `[a-f0-9]{64}`)), group: 1},
	{id: "discord-client-secret", atKeywords: true, needs: assignOps, minRun: 10, keywords: []string{"discord"}, re: mustRe(semiGeneric(`discord`, `[a-z0-9=_\-]{32}`)), group: 1, entropy: 2},
	{id: "telegram-bot-api-token", atKeywords: true, needs: assignOps, minRun: 10, keywords: []string{"telegr"}, re: mustRe(semiGeneric(`telegr`, `[0-9]{5,16}:(?-i:A)[a-z0-9_\-]{34}`)), group: 1},
	// tidings: a bot token without the "telegram" keyword. The shape
	// (bot id, colon, "A" and 34 more URL-safe characters) is specific
	// enough on its own in messages.
	{id: "telegram-bot-token-bare", minRun: 16, keywords: []string{":a"}, re: mustRe(`\b([0-9]{5,16}:A[a-zA-Z0-9_\-]{34})` + tokEnd), group: 1, entropy: 3},

	// --- Payments and commerce
	{id: "stripe-access-token", minRun: 16, keywords: []string{"sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod"},
		re: mustRe(`\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})` + tokEnd), group: 1, entropy: 2},
	{id: "square-access-token", minRun: 16, keywords: []string{"sq0atp-", "eaaa"}, re: mustRe(`\b((?:EAAA|sq0atp-)[\w-]{22,60})` + tokEnd), group: 1, entropy: 2},
	{id: "shopify-access-token", minRun: 16, keywords: []string{"shpat_"}, re: mustRe(`shpat_[a-fA-F0-9]{32}`), entropy: 2},
	{id: "shopify-custom-access-token", minRun: 16, keywords: []string{"shpca_"}, re: mustRe(`shpca_[a-fA-F0-9]{32}`), entropy: 2},
	{id: "shopify-private-app-access-token", minRun: 16, keywords: []string{"shppa_"}, re: mustRe(`shppa_[a-fA-F0-9]{32}`), entropy: 2},
	{id: "shopify-shared-secret", minRun: 16, keywords: []string{"shpss_"}, re: mustRe(`shpss_[a-fA-F0-9]{32}`), entropy: 2},

	// --- AI and developer platforms
	{id: "openai-api-key", minRun: 16, keywords: []string{"t3blbkfj"},
		re: mustRe(`\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})` + tokEnd), group: 1, entropy: 3},
	{id: "anthropic-api-key", minRun: 16, keywords: []string{"sk-ant-api03"}, re: mustRe(`\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)` + tokEnd), group: 1},
	{id: "anthropic-admin-api-key", minRun: 16, keywords: []string{"sk-ant-admin01"}, re: mustRe(`\b(sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA)` + tokEnd), group: 1},
	{id: "huggingface-access-token", minRun: 16, keywords: []string{"hf_"}, re: mustRe(`\b(hf_(?i:[a-z]{34}))` + tokEnd), group: 1, entropy: 2},
	{id: "huggingface-organization-api-token", minRun: 16, keywords: []string{"api_org_"}, re: mustRe(`\b(api_org_(?i:[a-z]{34}))` + tokEnd), group: 1, entropy: 2},
	{id: "npm-access-token", minRun: 16, keywords: []string{"npm_"}, re: mustRe(`(?i)\b(npm_[a-z0-9]{36})` + tokEnd), group: 1, entropy: 2},
	{id: "pypi-upload-token", minRun: 16, keywords: []string{"pypi-ageichlwas5vcmc"}, re: mustRe(`pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}`), entropy: 3},
	{id: "twilio-api-key", minRun: 16, keywords: []string{"sk"}, caseKeywords: []string{"SK"}, re: mustRe(`\bSK[0-9a-fA-F]{32}\b`), entropy: 3},
	{id: "sendgrid-api-token", minRun: 16, keywords: []string{"sg."}, caseKeywords: []string{"SG."}, re: mustRe(`\b(SG\.(?i)[a-z0-9=_\-\.]{66})` + tokEnd), group: 1, entropy: 2},

	// --- Keys and tokens of any origin
	{id: "private-key", keywords: []string{"-----begin"},
		re: mustRe(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----`)},
	// tidings: a private key block cut off before its END line (a message
	// length limit, a partial paste) is masked from BEGIN to the end of
	// its base64 body.
	{id: "private-key-truncated", keywords: []string{"-----begin"},
		re: mustRe(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=\s]{64,}`)},
	// jwt: gitleaks' expression, plus detect-secrets' formal validity
	// check (the header decodes to a JSON object).
	{id: "jwt", minRun: 16, keywords: []string{"eyj"},
		re: mustRe(`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)` + tokEnd), group: 1, entropy: 3,
		allow: func(s, _ string) bool { return !jwtHeaderOK(s) }},
	// generic-api-key: gitleaks' identifiers, operators, entropy floor
	// (3.5) and allowlists, with two message-specific changes: the value
	// must contain a digit and a letter, and it cannot end in a full stop.
	{id: "generic-api-key", atKeywords: true, needs: assignOps, minRun: 10, keywords: []string{"access", "api", "auth", "key", "credential", "creds", "passwd", "password", "secret", "token"},
		re: mustRe(semiGeneric(`access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token`,
			`[\w.=-]{9,149}[\w=-]|[a-z0-9][a-z0-9+/]{11,}={0,3}`)), group: 1, entropy: 3.5,
		allow: func(s, upto string) bool {
			// genericValueOK (a digit and a letter) subsumes gitleaks'
			// letters-only allowlist ^[a-zA-Z_.-]+$ and is checked first
			// because it is cheap.
			return !genericValueOK(s) || genericAllowRe.MatchString(upto)
		}},
	// tidings: a password given with ":" or "=" in prose ("wifi password:
	// Tr4mpoline!Sky42"). Passwords people text contain punctuation the
	// generic rule's value class excludes; the value needs a digit and a
	// letter, and trailing sentence punctuation is not part of it.
	{id: "password-assignment", atKeywords: true, wordStart: true, needs: assignOps, minRun: 5,
		keywords: []string{"passw", "pwd", "pw", "contraseña", "senha", "mot de passe"},
		re:       mustRe(`^(?i)(?:passw(?:or)?d|passwort|pwd|pw|contraseña|senha|mot de passe)[ \t]*(?::|=)[ \t]*["'“]?([^\s"'”]{4,64}[^\s"'”.,;:!?)])`),
		group:    1,
		allow:    func(s, _ string) bool { return !genericValueOK(s) }},
}
