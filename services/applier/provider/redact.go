package provider

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/zonestream/zonestream/stage"
)

// Mask stands for a credential cut out of text that leaves the applier.
const Mask = "[redacted]"

// Redact returns s with every credential it may carry masked. A provider's
// error becomes a result on the bus, which every collector writes into
// Kubernetes Events and status, and a log line: a password in a URL, a
// token in a query or a header echoed by a server would reach every
// cluster. It masks
//   - every secret value the process was configured with (stage.Secrets),
//     as given and as escaped in a URL;
//   - a URL's userinfo: the password, as net/url's Redacted does, or the
//     user alone, which is then a token (https://TOKEN@host);
//   - the value of a parameter or field whose name says it is a credential
//     (token=, api_key=, signature=, "password": ...);
//   - the value of an Authorization or API key header.
//
// Redacting redacted text changes nothing.
func Redact(s string) string {
	// Every pattern needs a ':' (a URL, a header, a JSON field) or an '='
	// (a parameter): most text of a log line (a zone, an ID, a status) has
	// neither, and is spared the expressions.
	if strings.ContainsAny(s, ":=") {
		s = urlPattern.ReplaceAllStringFunc(s, redactUserinfo)
		for _, p := range credentialPatterns {
			s = p.ReplaceAllString(s, "${1}"+Mask)
		}
	}
	// Last: a secret masked first would leave its URL unparsable.
	for _, v := range stage.Secrets() {
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
			s = strings.ReplaceAll(s, form, Mask)
		}
	}
	return s
}

// urlPattern finds a URL in free text: it ends at white space or a quote.
var urlPattern = regexp.MustCompile("[a-zA-Z][a-zA-Z0-9+.-]*://[^\\s\"'`<>]+")

// redactUserinfo masks the userinfo of the URL raw; a URL it cannot
// parse keeps only its scheme, since where its userinfo ends is unknown.
func redactUserinfo(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		scheme, _, _ := strings.Cut(raw, "://")
		return scheme + "://" + Mask
	case u.User == nil:
		return raw
	}
	if _, hasPassword := u.User.Password(); !hasPassword {
		u.User = url.User("xxxxx") // net/url's mask, which needs no escaping
	}
	return u.Redacted()
}

// credentialName matches the name of a parameter, field or header that
// holds a credential: token, access_token, key, apikey, api_key,
// X-Amz-Signature, sig, client_secret, password, ...
const credentialName = `[\w.-]*(?:token|key|secret|password|passwd|pwd|signature|sig|credential|auth)s?`

// credentialPatterns match a credential's name and what separates it from
// its value (group 1), and the value, which is masked. A value ends where
// the text around it goes on (a quote, a bracket, a separator; a query's
// value at a colon it ends with, as in "GET url: HTTP 500"), and never
// starts with "[" but for Mask itself, so that Mask is not masked again.
var credentialPatterns = []*regexp.Regexp{
	// A query parameter or a key=value field: ?token=..., api_key=...
	regexp.MustCompile(`(?i)\b(` + credentialName + `=)[^\s"'&;,()\[\]]*[^\s"'&;,()\[\]:]`),
	// A JSON field: "password": "...".
	regexp.MustCompile(`(?i)("` + credentialName + `"\s*:\s*")[^"]*`),
	// A header, as sent or as Go prints an http.Header: "Authorization:
	// Bearer ...", "X-API-Key: ...", "map[Authorization:[Basic ...]]".
	regexp.MustCompile(`(?i)\b((?:(?:proxy-)?authorization|[\w-]*(?:api-?key|token|secret))\s*:\s*\[??(?:(?:bearer|basic|digest|token|negotiate)\s+)?)(?:` + regexp.QuoteMeta(Mask) + `|[^\s"',()\[\]{}]+)`),
}
