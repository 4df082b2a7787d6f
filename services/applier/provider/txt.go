package provider

import (
	"fmt"
	"strconv"
	"strings"
)

// A TXT value travels in presentation form (RFC 1035 5.1) in UPDATE
// messages (as miekg/dns holds it) and in PowerDNS' API: character-strings
// of at most 255 bytes, '"' and '\' escaped with a backslash, bytes
// outside printable ASCII written \DDD.

// SplitTXT cuts a TXT value into character-strings of at most 255 bytes,
// each escaped.
func SplitTXT(v string) []string {
	if v == "" {
		return []string{""}
	}
	var out []string
	for len(v) > 0 {
		n := min(255, len(v))
		out = append(out, escapeTXT(v[:n]))
		v = v[n:]
	}
	return out
}

func escapeTXT(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c > '~':
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// UnescapeTXT reads one escaped character-string back: \DDD is the byte
// DDD, \X is X.
func UnescapeTXT(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			if v, err := strconv.Atoi(s[i+1 : i+4]); err == nil && v < 256 {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i+1])
		i++
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
